// The same tuples as the ceiling, emitted through Storm's own JavaScript multilang library (storm.js from
// the Maven artifact org.apache.storm:multilang-javascript), as a Storm user would write the spout.
const { Spout } = require(process.env.STORM_JS);

const batch = Number(process.env.CEILING_BATCH ?? 100);
const payload = 'x'.repeat(Number(process.env.PAYLOAD_BYTES ?? 100));

function BenchSpout() {
  Spout.call(this);
  this.seq = 0;
}
BenchSpout.prototype = Object.create(Spout.prototype);
BenchSpout.prototype.constructor = BenchSpout;
BenchSpout.prototype.nextTuple = function nextTuple(done) {
  for (let i = 0; i < batch; i += 1) {
    this.seq += 1;
    this.emit(
      { tuple: ['key', payload, 'shardId-000000000000', String(this.seq), 0], id: `shardId-000000000000:${this.seq}` },
      () => undefined,
    );
  }
  done();
};
// storm.js's own activate and deactivate never call `done`, so its sync never comes and ShellSpout waits
// for it forever (Storm sends activate when the topology starts).
BenchSpout.prototype.activate = (done) => done();
BenchSpout.prototype.deactivate = (done) => done();
BenchSpout.prototype.ack = (_id, done) => done();
BenchSpout.prototype.fail = (_id, done) => done();

new BenchSpout().run();
