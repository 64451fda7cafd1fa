import { parseKinesis, parseSizes, scaleRuns } from '../../../bench/scale';

test('SCALE sizes may name their emulator; the others run on each of SCALE_KINESIS in turn', () => {
  const sizes = parseSizes('16x4@fast,64x8,256x16@kinesis-local');
  expect(scaleRuns(sizes, parseKinesis('fast,kinesis-local'))).toEqual([
    { shards: 16, tasks: 4, kinesis: 'fast' },
    { shards: 64, tasks: 8, kinesis: 'fast' },
    { shards: 64, tasks: 8, kinesis: 'kinesis-local' },
    { shards: 256, tasks: 16, kinesis: 'kinesis-local' },
  ]);
  expect(scaleRuns(parseSizes('16x4'), parseKinesis(undefined))).toEqual([
    { shards: 16, tasks: 4, kinesis: 'kinesis-local' },
  ]);
});

test('an unknown emulator or size is refused with the variable named', () => {
  expect(() => parseKinesis('kinesalite')).toThrow('SCALE_KINESIS: "kinesalite" is not one of kinesis-local, fast');
  expect(() => parseSizes('64x8@slow')).toThrow('SCALE "64x8@slow"');
  expect(() => parseSizes('4x8')).toThrow('SCALE: "4x8"');
});
