package kcl;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
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
import software.amazon.kinesis.retrieval.KinesisClientRecord;
import software.amazon.kinesis.retrieval.polling.PollingConfig;

/**
 * A KCL application for the tests: reads one stream from TRIM_HORIZON (or its lease table's checkpoints),
 * checkpoints every record it takes, and prints each on stdout after its checkpoint is written
 * ({@code record <shardId>:<sequenceNumber>[:<subSequence>]}, the spout's message ids), so what it printed
 * is what its table says is done. {@code --limits-file F}: lines {@code shardId=N}, read again at each batch
 * (a test adds the children of a split as they appear): of that shard, take only the first N (user) records
 * this run and never finish it; the rest is what a consumer after it must read. Runs until killed.
 *
 * <pre>
 * java -cp ... kcl.KclRunner --stream S --app A --kinesis http://127.0.0.1:P --dynamodb http://127.0.0.1:Q
 *      [--region us-east-1] [--worker W] [--failover-ms 10000] [--limits-file F]
 * </pre>
 */
public final class KclRunner {
    private KclRunner() {
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> opts = new HashMap<>();
        for (int i = 0; i + 1 < args.length; i += 2) {
            opts.put(args[i].replaceFirst("^--", ""), args[i + 1]);
        }
        LocalClients clients = new LocalClients(
                opts.getOrDefault("region", "us-east-1"), "test", opts.get("kinesis"), opts.get("dynamodb"));
        String limitsFile = opts.get("limits-file");
        String stream = opts.get("stream");
        String worker = opts.getOrDefault("worker", "kcl-" + UUID.randomUUID());
        ConfigsBuilder configs = new ConfigsBuilder(
                stream, opts.get("app"), clients.kinesis, clients.dynamo, clients.cloudWatch, worker,
                () -> new Processor(limitsFile));
        InitialPositionInStreamExtended start =
                InitialPositionInStreamExtended.newInitialPosition(InitialPositionInStream.TRIM_HORIZON);
        long failoverMs = Long.parseLong(opts.getOrDefault("failover-ms", "10000"));
        Scheduler scheduler = new Scheduler(
                configs.checkpointConfig(),
                configs.coordinatorConfig().parentShardPollIntervalMillis(500),
                configs.leaseManagementConfig()
                        .failoverTimeMillis(failoverMs)
                        .shardSyncIntervalMillis(2_000)
                        .initialPositionInStream(start),
                configs.lifecycleConfig(),
                configs.metricsConfig().metricsFactory(new NullMetricsFactory()),
                configs.processorConfig(),
                configs.retrievalConfig()
                        .initialPositionInStreamExtended(start)
                        .retrievalSpecificConfig(new PollingConfig(stream, clients.kinesis).idleTimeBetweenReadsInMillis(250)));
        System.out.println("worker " + worker);
        scheduler.run();
    }

    /** One shard's processor: takes records up to its limit, each checkpointed before it is printed. */
    static final class Processor implements ShardRecordProcessor {
        private final String limitsFile;
        private String shardId;
        private int taken;

        Processor(String limitsFile) {
            this.limitsFile = limitsFile;
        }

        private boolean limited() {
            if (limitsFile == null) {
                return false;
            }
            try {
                for (String line : Files.readAllLines(Path.of(limitsFile))) {
                    String[] kv = line.trim().split("=");
                    if (kv.length == 2 && kv[0].equals(shardId)) {
                        return taken >= Integer.parseInt(kv[1]);
                    }
                }
            } catch (IOException e) {
                throw new IllegalStateException("cannot read " + limitsFile, e);
            }
            return false;
        }

        @Override
        public void initialize(InitializationInput input) {
            shardId = input.shardId();
            print("init " + shardId + " " + input.extendedSequenceNumber());
        }

        @Override
        public void processRecords(ProcessRecordsInput input) {
            for (KinesisClientRecord record : input.records()) {
                if (limited()) {
                    return;
                }
                try {
                    input.checkpointer().checkpoint(record.sequenceNumber(), record.subSequenceNumber());
                } catch (Exception e) {
                    print("error " + shardId + " " + e);
                    return;
                }
                taken += 1;
                String id = shardId + ":" + record.sequenceNumber()
                        + (record.aggregated() ? ":" + record.subSequenceNumber() : "");
                print("record " + id);
            }
        }

        @Override
        public void leaseLost(LeaseLostInput input) {
            print("lost " + shardId);
        }

        @Override
        public void shardEnded(ShardEndedInput input) {
            if (limited()) {
                // Not finished: KCL keeps the lease at its last checkpoint and the children wait.
                return;
            }
            try {
                input.checkpointer().checkpoint();
                print("end " + shardId);
            } catch (Exception e) {
                print("error " + shardId + " " + e);
            }
        }

        @Override
        public void shutdownRequested(ShutdownRequestedInput input) {
        }

        private static synchronized void print(String line) {
            System.out.println(line);
            System.out.flush();
        }
    }
}
