package kcl;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import software.amazon.kinesis.common.ConfigsBuilder;
import software.amazon.kinesis.common.InitialPositionInStream;
import software.amazon.kinesis.common.InitialPositionInStreamExtended;
import software.amazon.kinesis.coordinator.Scheduler;
import software.amazon.kinesis.lifecycle.events.InitializationInput;
import software.amazon.kinesis.lifecycle.events.LeaseLostInput;
import software.amazon.kinesis.lifecycle.events.ProcessRecordsInput;
import software.amazon.kinesis.lifecycle.events.ShardEndedInput;
import software.amazon.kinesis.lifecycle.events.ShutdownRequestedInput;
import software.amazon.kinesis.metrics.NullMetricsFactory;
import software.amazon.kinesis.processor.ShardRecordProcessor;
import software.amazon.kinesis.retrieval.polling.PollingConfig;

/**
 * The KCL side of the benchmark's side by side (bench/kclSideBySide.ts): a KCL application with KCL's
 * default settings but what it must be told (the endpoints, the lease table's name, polling instead of
 * fan-out, TRIM_HORIZON, metrics off) and a record processor that only counts. Prints
 * {@code first <shardId>} when a shard's first record reaches the processor and {@code batch <shardId> <n>}
 * for every batch of records it is handed (the first included: the failover measurement needs to know who
 * read a shard last), nothing per record, and never checkpoints (an idle shard costs what KCL's reading and
 * leases cost, nothing of the application's; a lease taken over is read again from the stream's start).
 * Runs until killed.
 *
 * <pre>
 * java -cp ... kcl.KclBench --stream S --app A --table T --kinesis http://127.0.0.1:P
 *      --dynamodb http://127.0.0.1:Q [--region us-east-1]
 * </pre>
 */
public final class KclBench {
    private static final Map<String, AtomicLong> COUNTS = new ConcurrentHashMap<>();

    private KclBench() {
    }

    public static void main(String[] args) {
        Map<String, String> opts = new ConcurrentHashMap<>();
        for (int i = 0; i + 1 < args.length; i += 2) {
            opts.put(args[i].replaceFirst("^--", ""), args[i + 1]);
        }
        for (String key : new String[] {"stream", "app", "table", "kinesis", "dynamodb"}) {
            if (!opts.containsKey(key)) {
                throw new IllegalArgumentException("--" + key + " is required (see KclBench's usage)");
            }
        }
        LocalClients clients = new LocalClients(
                opts.getOrDefault("region", "us-east-1"), "bench", opts.get("kinesis"), opts.get("dynamodb"));
        String stream = opts.get("stream");
        ConfigsBuilder configs = new ConfigsBuilder(
                stream, opts.get("app"), clients.kinesis, clients.dynamo, clients.cloudWatch,
                "bench-" + ProcessHandle.current().pid(), Counter::new)
                .tableName(opts.get("table"));
        InitialPositionInStreamExtended start =
                InitialPositionInStreamExtended.newInitialPosition(InitialPositionInStream.TRIM_HORIZON);
        Scheduler scheduler = new Scheduler(
                configs.checkpointConfig(),
                configs.coordinatorConfig(),
                configs.leaseManagementConfig().initialPositionInStream(start),
                configs.lifecycleConfig(),
                configs.metricsConfig().metricsFactory(new NullMetricsFactory()),
                configs.processorConfig(),
                configs.retrievalConfig()
                        .initialPositionInStreamExtended(start)
                        .retrievalSpecificConfig(new PollingConfig(stream, clients.kinesis)));
        print("started");
        scheduler.run();
    }

    /** One shard's processor: counts the records it is handed; says so at the first. */
    static final class Counter implements ShardRecordProcessor {
        private String shardId;

        @Override
        public void initialize(InitializationInput input) {
            shardId = input.shardId();
        }

        @Override
        public void processRecords(ProcessRecordsInput input) {
            if (input.records().isEmpty()) {
                return;
            }
            AtomicLong count = COUNTS.computeIfAbsent(shardId, id -> new AtomicLong());
            if (count.getAndAdd(input.records().size()) == 0) {
                print("first " + shardId);
            }
            print("batch " + shardId + " " + input.records().size());
        }

        @Override
        public void leaseLost(LeaseLostInput input) {
        }

        @Override
        public void shardEnded(ShardEndedInput input) {
        }

        @Override
        public void shutdownRequested(ShutdownRequestedInput input) {
        }
    }

    private static synchronized void print(String line) {
        System.out.println(line);
        System.out.flush();
    }
}
