/**
 * Leases on engine config edits (trust entries): before the harness adds a key to a shared config file it
 * records who owns the edit (pid + the process's start time, so a recycled pid is not mistaken for the owner)
 * and how to undo it. When the owner dies without undoing (kill -9, second Ctrl-C, full disk), any later
 * command reclaims the lease: the key is removed under the config file's own lock, then the lease file.
 */
import { readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { editConfigFile, JSON_CONFIG, TOML_CONFIG, type ConfigDoc } from './config-file.js';
import { assertAgentPathSafe, confineToAgentRoots } from './agent-writable.js';
import { writeFileAtomic } from './atomic-write.js';
import { isWithin } from './path-within.js';

/** Who owns a lease: a pid and its kernel start time (null where /proc is unavailable). */
export interface LeaseOwner {
  pid: number;
  start_time: string | null;
}

/** A recorded config edit and its owner (a lease file; its schema, `LeaseSchema`, is in lease-schema.ts). */
export interface Lease {
  id: string;
  owner: LeaseOwner;
  file: string;
  format: 'JSON' | 'TOML';
  key_path: string[];
  created_at: string;
}

/** The start time of `pid` in clock ticks since boot (field 22 of /proc/pid/stat), or null when unknown. */
export function readProcessStartTime(pid: number): string | null {
  return readProcessStat(pid)?.startTime ?? null;
}

/** The state letter (`R`, `S`, `Z`…) and start time of a process, from /proc/<pid>/stat; null when unreadable. */
function readProcessStat(pid: number): { state: string; startTime: string | null } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: fields are counted after its last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { state: fields[0] ?? '', startTime: fields[19] ?? null };
  } catch {
    return null;
  }
}

/** The owner record of the current process. */
export function describeCurrentOwner(): LeaseOwner {
  return { pid: process.pid, start_time: readProcessStartTime(process.pid) };
}

/**
 * True while the owner process still runs (same pid and, where known, same start time). A zombie is dead: a killed
 * owner whose parent has not reaped it yet (a process whose parent is gone waits for PID 1) runs no more.
 */
export function isOwnerAlive(owner: LeaseOwner): boolean {
  try {
    process.kill(owner.pid, 0);
  } catch (error) {
    // EPERM means the pid exists (another user's process): fall through to the start-time check.
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const now = readProcessStat(owner.pid);
  if (now !== null && (now.state === 'Z' || now.state === 'X')) return false;
  if (owner.start_time === null) return true;
  return now === null || now.startTime === null || now.startTime === owner.start_time;
}

function leaseDir(root: string): string {
  return path.join(root, 'leases');
}

/** Records a lease on `keyPath` in `file` under `root`/leases before the edit is made; returns the lease. */
export async function takeLease(
  root: string,
  file: string,
  format: 'JSON' | 'TOML',
  keyPath: string[],
  owner: LeaseOwner = describeCurrentOwner(),
): Promise<Lease> {
  const lease: Lease = {
    id: randomUUID(),
    owner,
    file,
    format,
    key_path: keyPath,
    created_at: new Date().toISOString(),
  };
  const record = path.join(leaseDir(root), `${lease.id}.json`);
  assertAgentPathSafe(record);
  await fs.mkdir(leaseDir(root), { recursive: true });
  await writeFileAtomic(record, `${JSON.stringify(lease, null, 2)}\n`);
  return lease;
}

/** Drops a lease after its owner undid the edit itself. */
export async function releaseLease(root: string, lease: Lease): Promise<void> {
  await fs.rm(path.join(leaseDir(root), `${lease.id}.json`), { force: true });
}

/** Removes `keyPath` from `doc`, then prunes the tables it leaves empty. */
function deleteKeyPath(doc: ConfigDoc, keyPath: string[]): void {
  const parents: ConfigDoc[] = [doc];
  for (const key of keyPath.slice(0, -1)) {
    const next = parents[parents.length - 1]![key];
    if (typeof next !== 'object' || next === null || Array.isArray(next)) return;
    parents.push(next as ConfigDoc);
  }
  delete parents[parents.length - 1]![keyPath[keyPath.length - 1]!];
  for (let i = parents.length - 1; i > 0; i--) {
    if (Object.keys(parents[i]!).length > 0) break;
    delete parents[i - 1]![keyPath[i - 1]!];
  }
}

/** Reads every lease under `root`; unreadable lease files are skipped (they are reported, not fatal). */
export async function listLeases(
  root: string,
): Promise<{ leases: { lease: Lease; path: string }[]; unreadable: string[] }> {
  const names = await fs.readdir(leaseDir(root)).catch(() => [] as string[]);
  const leases: { lease: Lease; path: string }[] = [];
  const unreadable: string[] = [];
  const files = names.filter((n) => n.endsWith('.json'));
  if (files.length === 0) return { leases, unreadable };
  // The schema (and zod) load only when there is a lease to check: an attempt's start normally finds none.
  const { LeaseSchema } = await import('./lease-schema.js');
  for (const name of files) {
    const file = path.join(leaseDir(root), name);
    try {
      leases.push({ lease: LeaseSchema.parse(JSON.parse(await fs.readFile(file, 'utf8'))), path: file });
    } catch {
      unreadable.push(file);
    }
  }
  return { leases, unreadable };
}

/** Undoes and removes every lease under `root` whose owner is gone; a live owner's lease is never touched. */
export async function reclaimDeadLeases(root: string): Promise<Lease[]> {
  const { leases } = await listLeases(root);
  const reclaimed: Lease[] = [];
  // A run's home is the agent's to write: a lease there may be planted. Only a file inside the home it was found in
  // is edited, never through a symbolic link (agent-writable.ts); a lease naming any other file is dropped unread.
  await confineToAgentRoots([root], async () => {
    for (const { lease, path: leaseFile } of leases) {
      if (isOwnerAlive(lease.owner)) continue;
      if (isInside(lease.file, root))
        await editConfigFile(lease.file, lease.format === 'TOML' ? TOML_CONFIG : JSON_CONFIG, (doc) =>
          deleteKeyPath(doc, lease.key_path),
        );
      await fs.rm(leaseFile, { force: true });
      reclaimed.push(lease);
    }
  });
  return reclaimed;
}

/** Whether `file` is strictly inside `root` (lexically). */
function isInside(file: string, root: string): boolean {
  const [child, parent] = [path.resolve(file), path.resolve(root)];
  return child !== parent && isWithin(child, parent);
}

/**
 * What an engine calls before adding a trust entry: reclaims dead owners' leases under the managed home, then
 * leases `keyPath` in `file` for this process. Returns the release to call once the entry was removed again.
 */
export async function leaseConfigEntry(
  agentHome: string,
  file: string,
  format: 'JSON' | 'TOML',
  keyPath: string[],
): Promise<() => Promise<void>> {
  await reclaimDeadLeases(agentHome);
  const lease = await takeLease(agentHome, file, format, keyPath);
  return () => releaseLease(agentHome, lease);
}
