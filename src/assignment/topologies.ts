/**
 * Two topologies of one application side by side (a new version deployed beside the old one; docs/operations.md,
 * "Deploying a new version"): which members share the shards, and when a task gives way. Pure.
 *
 * - A member *reads* while it is active and not on standby. A member whose node predates these fields (an older
 *   release) reads, of a topology of its own.
 * - A deactivated task gives way when a member of another topology reads: it goes on standby and hands every
 *   lease over (the planned hand-over of a leaving task). Without one (`storm rebalance`, `storm deactivate`)
 *   nothing changes: it keeps its leases and stays among those who share.
 * - A task on standby stays there, reactivated or not, while any member of another topology is not on standby:
 *   a reactivated old topology does not take back what the new one holds unless the new one goes away.
 * - Members that gave way (on standby, or deactivated beside a reading topology) are left out of the sharing.
 */
import type { MemberPresence } from '../coordination/store';

export interface DeployView {
  /** Members to share the shards among, sorted: those that gave way left out. */
  sharing: string[];
  /** This task gives way: it takes nothing and hands every lease it holds over. */
  givesWay: boolean;
  /** What this task's member node says now. */
  presence: MemberPresence;
}

const reads = (m: Partial<MemberPresence>) => m.active !== false && m.standby !== true;

/**
 * `members` as their nodes say (this task's own entry may lag: `mine` is what it is now, and what its node is
 * to say, but for `standby`, which this decides).
 */
export function deployView(
  me: string,
  mine: MemberPresence,
  members: ReadonlyMap<string, Partial<MemberPresence>>,
): DeployView {
  const others = [...members].filter(([id]) => id !== me).map(([, m]) => m);
  const ofAnother = (m: Partial<MemberPresence>) => m.topology !== mine.topology;
  const standby = mine.standby
    ? others.some((m) => ofAnother(m) && m.standby !== true)
    : !mine.active && others.some((m) => ofAnother(m) && reads(m));
  const presence: MemberPresence = { ...mine, standby };
  const all = new Map(members).set(me, presence);
  const readers = [...all.values()].filter(reads);
  const gaveWay = (m: Partial<MemberPresence>) =>
    m.standby === true || (m.active === false && readers.some((r) => r.topology !== m.topology));
  const sharing = [...all]
    .filter(([, m]) => !gaveWay(m))
    .map(([id]) => id)
    .sort();
  return { sharing, givesWay: standby, presence };
}
