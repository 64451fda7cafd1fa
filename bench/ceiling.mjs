// The ceiling: a process that only answers the multilang protocol, emitting a ready-made batch per `next`.
// Nothing a spout does can be faster than this on the same driver.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

const batch = Number(process.env.CEILING_BATCH ?? 100);
const payload = 'x'.repeat(Number(process.env.PAYLOAD_BYTES ?? 100));
let seq = 0;
let buffer = '';
let lines = [];
let handshaken = false;

function reply(text) {
  process.stdout.write(text);
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

process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
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
});
process.stdin.on('end', () => process.exit(0));
