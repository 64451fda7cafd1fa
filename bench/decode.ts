/**
 * What reading Kinesis costs the spout per record, stage by stage (issue 17, part 3): a GetRecords answer
 * shaped exactly as Kinesis sends it (base64 `Data`, epoch-seconds `ApproximateArrivalTimestamp`, 56-digit
 * sequence numbers, a real-length `NextShardIterator`) decoded by the SDK's own client (its AWS JSON 1.1
 * protocol, base64 and timestamp parsing, the middleware stack and SigV4 signing; the HTTP exchange answered
 * from memory so that no socket is counted), against its parts done bare (JSON.parse, base64, Date) and
 * against what the spout does next with each record: the reader's record (shardReader.ts), the tuple
 * (`tupleOf`) and the emit frame (`StormOutput.emit`). CPU time (user + system) of this process per record;
 * stages alternate within each round; medians over rounds. BENCH_REGIMES=idle,busy as the other sections.
 *
 *   NODE_NO_WARNINGS=1 npx tsx bench/decode.ts [rounds] [sizes=100,1024,10240] [batches=500,10000]
 * or `BENCH_SECTIONS=decode npm run bench` (results in bench/results/ with the machine and date).
 */
import { GetRecordsCommand, KinesisClient } from '@aws-sdk/client-kinesis';
import { readFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import { DEFAULT_OUTPUT_FIELDS } from '../src/config/schema';
import type { DataFormat } from '../src/core/tuple';
import { isDeepStrictEqual } from 'node:util';
import { hasKplMagic } from '../src/kinesis/aggregation';
import { readGetRecordsFast } from '../src/kinesis/fastGetRecords';
import { type KinesisRecord, messageId, tupleOf } from '../src/kinesis/records';
import { StormOutput } from '../src/multilang/protocol';
import { summarize, type Summary } from './lib';
import { shellSpoutEnv } from '../test/helpers/spoutNode';
import { bundle, drive, Regime, startBusyLoops } from './protocol';
import type { DriverResult } from './driver/spec';
import type { SyntheticWire } from './syntheticKinesis';
import type { ZooKeeperServer } from '../test/helpers/zookeeperServer';
import { benchConf, benchNodeOptions } from './lib';

export const DECODE_STAGES = [
  /** The SDK's client.send(GetRecordsCommand), HTTP answered from memory. */
  'sdk',
  /** The same client with the fast path (src/kinesis/fastGetRecords.ts, config `fastGetRecords`). */
  'fast',
  /** Its parts, bare: the body's text and JSON.parse, */
  'jsonParse',
  /** Buffer.from(Data, 'base64') for every record, */
  'base64',
  /** new Date(seconds * 1000) for every record. */
  'dates',
  /** The reader's KinesisRecord from the SDK's output, and the KPL magic check (ownedShard.push). */
  'records',
  /** tupleOf with the default fields, dataFormat utf8 and base64. */
  'tupleUtf8',
  'tupleBase64',
  /** The emit frame (JSON) for that tuple with its message id. */
  'emitUtf8',
  'emitBase64',
] as const;
export type DecodeStage = (typeof DECODE_STAGES)[number];

export interface GetRecordsDecodeFigures {
  regime: Regime;
  payloadBytes: number;
  recordsPerBatch: number;
  bodyBytes: number;
  /** CPU µs per record of each stage. */
  microsPerRecord: Record<DecodeStage, Summary>;
  /** CPU µs per call of a GetRecords answered with no records: what a call costs whatever it carries. */
  emptyCallMicros: { sdk: Summary; fast: Summary };
  /** The SDK's share of the read-to-emit path per record: sdk / (sdk + records + tuple + emit), utf8 and base64. */
  sdkShareUtf8: Summary;
  sdkShareBase64: Summary;
  /** The fast path's, the same way. */
  fastShareUtf8: Summary;
  fastShareBase64: Summary;
  loadAverages: string[];
}

const SHARD = 'shardId-000000000007';
const MAX_CALL_BYTES = 10 * 2 ** 20;
const SEQUENCE_PREFIX = '49656587345271925863817654356201746584';

/** A GetRecords answer as Kinesis writes it (field order and number spelling as the service's). */
export function getRecordsBody(records: number, payloadBytes: number, seed = 1): string {
  let x = seed;
  const random = () => {
    x = (x * 1103515245 + 12345) % 2147483648;
    return x / 2147483648;
  };
  const text = (n: number) => {
    // Printable JSON-ish text: a valid utf8 payload whatever dataFormat reads it.
    let s = '{"v":"';
    while (s.length < n - 2) s += String.fromCharCode(97 + Math.floor(random() * 26));
    return `${s}"}`.slice(0, n);
  };
  const arrival = 1_764_680_000 + random() * 1000;
  const out: string[] = [];
  for (let i = 0; i < records; i += 1) {
    const data = Buffer.from(text(payloadBytes)).toString('base64');
    out.push(
      `{"ApproximateArrivalTimestamp":${(Math.round((arrival + i / 1000) * 1000) / 1000).toString()},"Data":"${data}",` +
        `"EncryptionType":"KMS","PartitionKey":"pk-${Math.floor(random() * 1e6)}","SequenceNumber":"${SEQUENCE_PREFIX}${String(i).padStart(18, '0')}"}`,
    );
  }
  const iterator = Buffer.from(text(210)).toString('base64');
  if (records === 0) return `{"MillisBehindLatest":0,"NextShardIterator":"${iterator}","Records":[]}`;
  return `{"MillisBehindLatest":12000,"NextShardIterator":"${iterator}","Records":[${out.join(',')}]}`;
}

/** An HTTP handler answering every request with `body` (200), as NodeHttpHandler hands over a response. */
export function memoryHandler(body: () => Buffer) {
  return {
    metadata: { handlerProtocol: 'http/1.1' },
    async handle() {
      const bytes = body();
      return {
        response: {
          statusCode: 200,
          reason: 'OK',
          headers: {
            'content-type': 'application/x-amz-json-1.1',
            'content-length': String(bytes.length),
            'x-amzn-requestid': 'bench',
          },
          body: Readable.from([bytes]),
        },
      };
    },
    updateHttpClientConfig() {},
    httpHandlerConfigs: () => ({}),
    destroy() {},
  };
}

function loadAverage(): string {
  return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
}

const cpuNow = () => {
  const u = process.cpuUsage();
  return u.user + u.system;
};

/** Runs `work` (one batch) until at least `minMs` of CPU; CPU µs per record. */
async function measure(work: () => unknown, records: number, minMs: number): Promise<number> {
  await work(); // warm
  let batches = 0;
  const start = cpuNow();
  let spent = 0;
  while (spent < minMs * 1000 || batches < 3) {
    await work();
    batches += 1;
    spent = cpuNow() - start;
  }
  return spent / (batches * records);
}

export async function decodeBench(
  options: { rounds: number; sizes: number[]; batches: number[]; regimes: Regime[]; minMs: number },
  log: (line: string) => void,
): Promise<GetRecordsDecodeFigures[]> {
  const figures: GetRecordsDecodeFigures[] = [];
  for (const regime of options.regimes) {
    const stopLoops = regime === Regime.Busy ? startBusyLoops() : () => undefined;
    try {
      for (const size of options.sizes) {
        // Kinesis returns at most 10 MiB of data a call.
        const batches = [...new Set(options.batches.map((b) => Math.min(b, Math.floor(MAX_CALL_BYTES / size))))];
        for (const batch of batches)
          figures.push(await oneCase(regime, size, batch, options.rounds, options.minMs, log));
      }
    } finally {
      stopLoops();
    }
  }
  return figures;
}

async function oneCase(
  regime: Regime,
  size: number,
  batch: number,
  rounds: number,
  minMs: number,
  log: (line: string) => void,
): Promise<GetRecordsDecodeFigures> {
  const text = getRecordsBody(batch, size);
  const body = Buffer.from(text);
  const clientOf = (answer: Buffer) =>
    new KinesisClient({
      region: 'us-east-1',
      endpoint: 'http://127.0.0.1:1',
      maxAttempts: 3,
      credentials: { accessKeyId: 'bench', secretAccessKey: 'bench' },
      requestHandler: memoryHandler(() => answer) as never,
    });
  const client = clientOf(body);
  const fastClient = clientOf(body);
  const empty = Buffer.from(getRecordsBody(0, size));
  const emptyClient = clientOf(empty);
  const emptyFastClient = clientOf(empty);
  let slow = 0;
  for (const c of [fastClient, emptyFastClient])
    readGetRecordsFast(c, (fast) => {
      if (!fast) slow += 1;
    });
  const command = () => new GetRecordsCommand({ ShardIterator: 'AAAAAAAAAAH', Limit: 10_000, StreamARN: undefined });
  const sdkOutput = await client.send(command());
  if (sdkOutput.Records?.length !== batch) throw new Error(`the SDK read ${sdkOutput.Records?.length} of ${batch}`);
  if (!isDeepStrictEqual(await fastClient.send(command()), sdkOutput) || slow > 0)
    throw new Error('the fast path does not read what the SDK reads');
  const parsed = JSON.parse(text) as { Records: { Data: string; ApproximateArrivalTimestamp: number }[] };
  const readerRecords = (): KinesisRecord[] =>
    (sdkOutput.Records ?? []).map((r) => ({
      shardId: SHARD,
      sequenceNumber: r.SequenceNumber!,
      partitionKey: r.PartitionKey!,
      data: r.Data ?? new Uint8Array(),
      arrivalMs: r.ApproximateArrivalTimestamp?.getTime() ?? 0,
    }));
  const records = readerRecords();
  const fields = [...DEFAULT_OUTPUT_FIELDS];
  const noBadJson = () => {
    throw new Error('not expected');
  };
  const tuples = (format: DataFormat) => records.map((r) => tupleOf(r, fields, format, noBadJson));
  const tuplesOf = { utf8: tuples('utf8'), base64: tuples('base64') };
  let sink = 0;
  const output = new StormOutput((t) => {
    sink += t.length;
  });
  output.pid(1);
  const emits = (format: 'utf8' | 'base64') => () => {
    const ts = tuplesOf[format];
    output.beginCommand();
    for (let i = 0; i < records.length; i += 1)
      output.emit(messageId(SHARD, records[i].sequenceNumber), ts[i], 'default');
    output.sync();
  };
  const stages: Record<DecodeStage, () => unknown> = {
    sdk: () => client.send(command()),
    fast: () => fastClient.send(command()),
    jsonParse: () => JSON.parse(body.toString('utf8')),
    base64: () => {
      for (const r of parsed.Records) sink += Buffer.from(r.Data, 'base64').length;
    },
    dates: () => {
      for (const r of parsed.Records) sink += new Date(r.ApproximateArrivalTimestamp * 1000).getTime() & 1;
    },
    records: () => {
      for (const r of readerRecords()) if (hasKplMagic(r.data)) sink += 1;
    },
    tupleUtf8: () => tuples('utf8'),
    tupleBase64: () => tuples('base64'),
    emitUtf8: emits('utf8'),
    emitBase64: emits('base64'),
  };
  const runs = new Map<DecodeStage, number[]>(DECODE_STAGES.map((s) => [s, []]));
  const emptyCalls = { sdk: [] as number[], fast: [] as number[] };
  const loads = [loadAverage()];
  for (let round = 0; round < rounds; round += 1) {
    const order = DECODE_STAGES.map((_, i) => DECODE_STAGES[(i + round) % DECODE_STAGES.length]);
    for (const stage of order) runs.get(stage)!.push(await measure(stages[stage], batch, minMs));
    const calls = round % 2 === 0 ? (['sdk', 'fast'] as const) : (['fast', 'sdk'] as const);
    for (const reader of calls)
      emptyCalls[reader].push(
        await measure(() => (reader === 'sdk' ? emptyClient : emptyFastClient).send(command()), 1, minMs / 3),
      );
    loads.push(loadAverage());
  }
  if (slow > 0) throw new Error('the fast path left an answer to the SDK');
  for (const c of [client, fastClient, emptyClient, emptyFastClient]) c.destroy();
  const r = (s: DecodeStage, i: number) => runs.get(s)![i];
  const share = (reader: 'sdk' | 'fast', format: 'Utf8' | 'Base64') =>
    summarize(
      runs
        .get(reader)!
        .map((read, i) => read / (read + r('records', i) + r(`tuple${format}`, i) + r(`emit${format}`, i))),
    );
  const microsPerRecord = Object.fromEntries(DECODE_STAGES.map((s) => [s, summarize(runs.get(s)!)])) as Record<
    DecodeStage,
    Summary
  >;
  const figures: GetRecordsDecodeFigures = {
    regime,
    payloadBytes: size,
    recordsPerBatch: batch,
    bodyBytes: body.length,
    microsPerRecord,
    emptyCallMicros: { sdk: summarize(emptyCalls.sdk), fast: summarize(emptyCalls.fast) },
    sdkShareUtf8: share('sdk', 'Utf8'),
    sdkShareBase64: share('sdk', 'Base64'),
    fastShareUtf8: share('fast', 'Utf8'),
    fastShareBase64: share('fast', 'Base64'),
    loadAverages: loads,
  };
  log(
    `decode ${regime} ${size} B x ${batch}: ` +
      DECODE_STAGES.map((s) => `${s} ${microsPerRecord[s].median.toFixed(2)}`).join(', ') +
      ` us/record; an empty call ${figures.emptyCallMicros.sdk.median.toFixed(0)} us (sdk), ${figures.emptyCallMicros.fast.median.toFixed(0)} us (fast); sdk share ${Math.round(figures.sdkShareUtf8.median * 100)} % (utf8), ${Math.round(figures.sdkShareBase64.median * 100)} % (base64), fast path's ${Math.round(figures.fastShareUtf8.median * 100)} %, ${Math.round(figures.fastShareBase64.median * 100)} %; load ${loads.join(' | ')}` +
      (sink < 0 ? '' : ''),
  );
  return figures;
}

const WIRES: SyntheticWire[] = ['objects', 'sdk', 'fast'];

/** The real spout process, driven as ShellSpout drives it, on one source of records in three wires. */
export interface SpoutWireFigures {
  regime: Regime;
  payloadBytes: number;
  /** Per wire: the spout process's CPU (user + system) per tuple acked, and tuples/s. */
  cpuMicrosPerTuple: Record<SyntheticWire, Summary>;
  tuplesPerSecond: Record<SyntheticWire, Summary>;
  /** Round by round: (sdk - objects) / sdk, the share of the spout's CPU per tuple the SDK's reading takes. */
  sdkShare: Summary;
  /** Round by round: fast / sdk, CPU per tuple. */
  fastToSdk: Summary;
  loadAverages: string[];
}

/**
 * The spout with its synthetic source (4 shards, 10,000 records a call) in three wires (bench/syntheticKinesis.ts):
 * records handed over as the SDK's output (`objects`: no decoding at all), and a Kinesis JSON answer read
 * by the SDK (`sdk`) or by the fast path (`fast`). The JSON wires also make their answer in the process
 * (a few string joins per record, the same for both).
 */
export async function spoutWireBench(
  root: string,
  zk: ZooKeeperServer,
  options: { rounds: number; seconds: number; warmupSeconds: number; payloads: number[]; regimes: Regime[] },
  log: (line: string) => void,
): Promise<SpoutWireFigures[]> {
  const driver = await bundle(root, 'bench/driver/leanDriver.ts', 'lean-driver.js');
  const spout = await bundle(root, 'bench/syntheticSpout.ts', 'synthetic-spout.js');
  const figures: SpoutWireFigures[] = [];
  for (const regime of options.regimes) {
    const stopLoops = regime === Regime.Busy ? startBusyLoops() : () => undefined;
    try {
      for (const payload of options.payloads) {
        const runs = new Map<SyntheticWire, DriverResult[]>(WIRES.map((w) => [w, []]));
        const loads = [loadAverage()];
        for (let round = 0; round < options.rounds; round += 1) {
          for (const wire of WIRES.map((_, i) => WIRES[(i + round) % WIRES.length])) {
            const conf = benchConf(
              zk,
              undefined,
              'synthetic',
              `decode-${process.pid}-${regime}-${payload}-${round}-${wire}`,
              {
                maxEmitPerNext: 100,
                maxRecordsPerRequest: 10_000,
                shardBufferSize: 20_000,
                maxRecordsInMemory: 100_000,
              },
            );
            const result = await drive(driver, {
              script: spout,
              nodeOptions: benchNodeOptions(),
              env: { ...shellSpoutEnv(), PAYLOAD_BYTES: String(payload), SYNTHETIC_SHARDS: '4', SYNTHETIC_WIRE: wire },
              conf,
              startTimeoutMs: 30_000,
              warmupSeconds: options.warmupSeconds,
              seconds: options.seconds,
              windowMs: 100,
            });
            runs.get(wire)!.push(result);
            log(
              `decode spout ${regime} ${payload} B round ${round + 1} ${wire}: ${Math.round(result.tuplesPerSecond)} tuples/s, ` +
                `${result.responderCpuMicrosPerTuple.toFixed(1)} us CPU/tuple, ${result.emptyNexts} empty nexts`,
            );
          }
          loads.push(loadAverage());
        }
        const of = (wire: SyntheticWire, key: 'responderCpuMicrosPerTuple' | 'tuplesPerSecond') =>
          runs.get(wire)!.map((r) => r[key]);
        const cpu = (wire: SyntheticWire) => of(wire, 'responderCpuMicrosPerTuple');
        const perWire = (key: 'responderCpuMicrosPerTuple' | 'tuplesPerSecond') =>
          Object.fromEntries(WIRES.map((w) => [w, summarize(of(w, key))])) as Record<SyntheticWire, Summary>;
        const figure: SpoutWireFigures = {
          regime,
          payloadBytes: payload,
          cpuMicrosPerTuple: perWire('responderCpuMicrosPerTuple'),
          tuplesPerSecond: perWire('tuplesPerSecond'),
          sdkShare: summarize(cpu('sdk').map((sdk, i) => (sdk - cpu('objects')[i]) / sdk)),
          fastToSdk: summarize(cpu('fast').map((fast, i) => fast / cpu('sdk')[i])),
          loadAverages: loads,
        };
        log(
          `decode spout ${regime} ${payload} B: CPU/tuple ` +
            WIRES.map((w) => `${w} ${figure.cpuMicrosPerTuple[w].median.toFixed(1)}`).join(', ') +
            ` us; the SDK's share ${Math.round(figure.sdkShare.median * 100)} %, fast/sdk ${figure.fastToSdk.median.toFixed(2)}; load ${loads.join(' | ')}`,
        );
        figures.push(figure);
      }
    } finally {
      stopLoops();
    }
  }
  return figures;
}

if (require.main === module) {
  const list = (s: string | undefined, fallback: string) => (s ?? fallback).split(',').filter(Boolean).map(Number);
  decodeBench(
    {
      rounds: Number(process.argv[2] ?? 5),
      sizes: list(process.argv[3], '100,1024,10240'),
      batches: list(process.argv[4], '500,10000'),
      regimes: (process.env.BENCH_REGIMES ?? 'idle').split(',') as Regime[],
      minMs: Number(process.env.BENCH_DECODE_MS ?? 300),
    },
    (line) => process.stdout.write(`${line}\n`),
  ).catch((err) => {
    process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  });
}
