/** The real spout process with a synthetic record source, for protocol throughput and CPU per tuple. */
import { runSpout } from '../src/cli/run';
import { type SyntheticWire, syntheticKinesis } from './syntheticKinesis';

const perCall = Number(process.env.SYNTHETIC_RECORDS_PER_CALL ?? 0);
const perSecond = Number(process.env.SYNTHETIC_RECORDS_PER_SECOND ?? 0);
runSpout({
  createKinesis: () =>
    syntheticKinesis({
      shards: Number(process.env.SYNTHETIC_SHARDS ?? 4),
      payloadBytes: Number(process.env.PAYLOAD_BYTES ?? 100),
      ...(perCall > 0 ? { recordsPerCall: perCall } : {}),
      ...(perSecond > 0 ? { recordsPerSecond: perSecond } : {}),
      wire: (process.env.SYNTHETIC_WIRE ?? 'objects') as SyntheticWire,
    }),
});
