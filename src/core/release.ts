/**
 * This release of the spout, as package.json names it (a unit test keeps the two equal). Written into every
 * value the spout stores in ZooKeeper, so that a release that meets a format it cannot read names the release
 * that wrote it (docs/zookeeper.md, "Formats across releases").
 */
export const RELEASE = 'kinesis-shell-spout 0.1.0';
