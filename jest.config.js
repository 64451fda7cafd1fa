/** Tests are tiered: test/unit (pure, milliseconds), test/integration (real ZooKeeper and Kinesis emulators). */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': ['ts-jest', { diagnostics: false }] },
  testTimeout: 120000,
  // Two workers on CI's two cores: npm test also runs the CPU-bound simulation and LocalCluster JVMs. The
  // integration files alone mostly wait (a fifth to a third of a core each): .ci/run gives them three.
  maxWorkers: 2,
  // Longest files first whatever jest has cached, end-to-end files apart (test/helpers/sequencer.js).
  testSequencer: '<rootDir>/test/helpers/sequencer.js',
};
