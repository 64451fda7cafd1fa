/** Tests are tiered: test/unit (pure, milliseconds), test/integration (real ZooKeeper and Kinesis emulators). */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': ['ts-jest', { diagnostics: false }] },
  testTimeout: 120000,
  // Two workers on CI's two cores: the integration files mostly wait (a third of a core each, measured
  // under load), but a third worker was not measured on an idle machine; try `npx jest -w 3` there first.
  maxWorkers: 2,
  // Longest files first whatever jest has cached, end-to-end files apart (test/helpers/sequencer.js).
  testSequencer: '<rootDir>/test/helpers/sequencer.js',
};
