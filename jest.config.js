/** Tests are tiered: test/unit (pure, milliseconds), test/integration (real ZooKeeper and Kinesis emulators). */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': ['ts-jest', { diagnostics: false }] },
  testTimeout: 120000,
  maxWorkers: 2,
};
