// The ceiling: a process that only answers the multilang protocol, emitting a ready-made batch per `next`.
// Nothing a spout does can be faster than this on the same driver. CEILING_IO=blocking makes it the
// floor of CPU per round trip: blocking reads and writes of the pipes and no event loop at all (which a
// real spout cannot afford: it has ZooKeeper and Kinesis to serve).
import { readSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';

const batch = Number(process.env.CEILING_BATCH ?? 100);
const payload = 'x'.repeat(Number(process.env.PAYLOAD_BYTES ?? 100));
const blocking = process.env.CEILING_IO === 'blocking';
let seq = 0;
let buffer = '';
let lines = [];
let handshaken = false;

function reply(text) {
  if (!blocking) return process.stdout.write(text);
  for (let offset = 0, bytes = Buffer.from(text); offset < bytes.length; ) offset += writeSync(1, bytes, offset);
}

function onFrame(body) {
  const msg = JSON.parse(body);
  if (!handshaken) {
    handshaken = true;
    writeFileSync(join(msg.pidDir, String(process.pid)), '');
    return reply(`${JSON.stringify({ pid: process.pid })}\nend\n`);
  }
  let out = '';
  if (msg.command === 'next') {
    for (let i = 0; i < batch; i += 1) {
      seq += 1;
      const id = `shardId-000000000000:${seq}`;
      out += `${JSON.stringify({ command: 'emit', id, tuple: ['key', payload, 'shardId-000000000000', String(seq), 0], need_task_ids: false })}\nend\n`;
    }
  }
  reply(`${out}{"command":"sync"}\nend\n`);
}

function onText(chunk) {
  buffer += chunk;
  let nl;
  while ((nl = buffer.indexOf('\n')) !== -1) {
    const line = buffer.slice(0, nl);
    buffer = buffer.slice(nl + 1);
    if (line === 'end') {
      onFrame(lines.join('\n'));
      lines = [];
    } else lines.push(line);
  }
}

if (blocking) {
  const chunk = Buffer.alloc(64 * 1024);
  for (let read; (read = readSync(0, chunk, 0, chunk.length, null)) > 0; ) onText(chunk.toString('utf8', 0, read));
  process.exit(0);
} else {
  process.stdin.setEncoding('utf8');
  process.stdin.on('data', onText);
  process.stdin.on('end', () => process.exit(0));
}
