/** A ZooKeeper session held in memory: one session, always connected, no watches fired; enough for a store. */
import type { AclEntry, NodeData, TxOp, ZooKeeper } from '../../../src/coordination/zooKeeper';

export class MemoryZooKeeper implements ZooKeeper {
  readonly sessionId = '0badc0ffee';
  readonly connectionState = 'connected' as const;
  readonly sessionTimeoutMs = 10_000;
  readonly nodes = new Map<string, NodeData>();
  /** Every write, in order, as "<op> <path>". */
  readonly writes: string[] = [];

  trustedUntil(): number {
    return Infinity;
  }

  /** Puts a node as an operator would (no write counted). */
  put(path: string, value: unknown): void {
    this.nodes.set(path, { data: Buffer.from(JSON.stringify(value)), version: 0, ephemeralOwner: '0' });
  }

  async create(path: string, data: Buffer, mode: 'persistent' | 'ephemeral'): Promise<'created' | 'exists'> {
    if (this.nodes.has(path)) return 'exists';
    this.writes.push(`create ${path}`);
    this.nodes.set(path, { data, version: 0, ephemeralOwner: mode === 'ephemeral' ? this.sessionId : '0' });
    return 'created';
  }

  async mkdirp(): Promise<void> {}

  /** No credentials here: every node is open, as the simulation's are. */
  async getACL(path: string): Promise<AclEntry[] | undefined> {
    return this.nodes.has(path) ? [{ scheme: 'world', id: 'anyone', perms: 31 }] : undefined;
  }

  async getData(path: string): Promise<NodeData | undefined> {
    return this.nodes.get(path);
  }

  async setData(path: string, data: Buffer, version: number): Promise<number | 'conflict'> {
    const node = this.nodes.get(path);
    if (!node || (version !== -1 && node.version !== version)) return 'conflict';
    this.writes.push(`set ${path}`);
    this.nodes.set(path, { ...node, data, version: node.version + 1 });
    return node.version + 1;
  }

  async getChildren(path: string): Promise<string[]> {
    const prefix = `${path}/`;
    return [...this.nodes.keys()].filter((p) => p.startsWith(prefix)).map((p) => p.slice(prefix.length));
  }

  async remove(path: string, version: number): Promise<boolean> {
    const node = this.nodes.get(path);
    if (!node || (version !== -1 && node.version !== version)) return false;
    this.writes.push(`remove ${path}`);
    return this.nodes.delete(path);
  }

  async transaction(ops: TxOp[]): Promise<boolean> {
    const ok = ops.every((op) => {
      const node = this.nodes.get(op.path);
      return op.op === 'create' ? !node : node !== undefined && (op.version === -1 || node.version === op.version);
    });
    if (!ok) return false;
    for (const op of ops) {
      if (op.op === 'create') await this.create(op.path, op.data, op.ephemeral ? 'ephemeral' : 'persistent');
      else if (op.op === 'set') await this.setData(op.path, op.data, op.version);
      else if (op.op === 'remove') await this.remove(op.path, op.version);
    }
    return true;
  }

  close(): void {}
}
