import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { editConfigFile, TOML_CONFIG, JSON_CONFIG, childTable } from '../../src/runtime/config-file.js';
import { spawn } from 'node:child_process';
import {
  describeCurrentOwner,
  isOwnerAlive,
  listLeases,
  readProcessStartTime,
  reclaimDeadLeases,
  takeLease,
} from '../../src/runtime/lease.js';
import { deadOwner } from '../helpers/processes.js';
import { waitUntil } from '../helpers/load-scaled.js';

let root: string;
beforeEach(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'ah-lease-'));
});
afterEach(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

describe('config leases', () => {
  it('takes a zombie owner for dead: killed, not yet reaped by its parent (a daemon whose starting command is gone)', async () => {
    // sh starts a child in the background, then becomes `sleep 600`, which never reaps it: a zombie once it ends (ten
    // minutes, so it stays one however slowly this test goes). The child ends only after the exec, when the flag file
    // appears: a child that ended before it could be reaped by sh itself (dash reaps finished jobs before a command).
    const flag = path.join(root, 'parent-exec-done');
    const parent = spawn(
      '/bin/sh',
      ['-c', '(while [ ! -e "$1" ]; do sleep 0.02; done) & echo $!; exec sleep 600', 'sh', flag],
      {
        stdio: ['ignore', 'pipe', 'ignore'],
      },
    );
    try {
      const pid = Number(
        await new Promise<string>((resolve) =>
          parent.stdout!.once('data', (chunk: Buffer) => resolve(chunk.toString())),
        ),
      );
      const execed = async (): Promise<boolean> =>
        (await fs.readFile(`/proc/${parent.pid}/cmdline`, 'utf8').catch(() => '')).startsWith('sleep\0');
      expect(await waitUntil(execed, 30_000, 20)).toBe(true);
      await fs.writeFile(flag, '');
      const zombie = async (): Promise<boolean> =>
        (await fs.readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '')).includes(') Z ');
      expect(await waitUntil(zombie, 30_000, 20)).toBe(true);
      // kill(pid, 0) succeeds on a zombie and its start time still reads as before.
      expect(() => process.kill(pid, 0)).not.toThrow();
      expect(isOwnerAlive({ pid, start_time: readProcessStartTime(pid) })).toBe(false);
      expect(isOwnerAlive({ pid: parent.pid!, start_time: readProcessStartTime(parent.pid!) })).toBe(true);
    } finally {
      parent.kill('SIGKILL');
    }
  });

  it("reclaims a dead owner's codex trust entry and keeps other projects", async () => {
    const config = path.join(root, 'home', '.codex', 'config.toml');
    await editConfigFile(config, TOML_CONFIG, (doc) => {
      childTable(doc, 'projects')['/keep'] = { trust_level: 'trusted' };
    });
    const owner = await deadOwner();
    await takeLease(root, config, 'TOML', ['projects', '/work/run-1'], owner);
    await editConfigFile(config, TOML_CONFIG, (doc) => {
      childTable(doc, 'projects')['/work/run-1'] = { trust_level: 'trusted' };
    });

    const reclaimed = await reclaimDeadLeases(root);

    expect(reclaimed.map((l) => l.key_path)).toEqual([['projects', '/work/run-1']]);
    const doc = parseToml(await fs.readFile(config, 'utf8')) as { projects: Record<string, unknown> };
    expect(Object.keys(doc.projects)).toEqual(['/keep']);
    expect((await listLeases(root)).leases).toEqual([]);
  });

  it('prunes the table a reclaimed entry leaves empty (gemini trustedFolders / claude projects)', async () => {
    const file = path.join(root, 'home', '.claude.json');
    const owner = await deadOwner();
    await takeLease(root, file, 'JSON', ['projects', '/work/run-2'], owner);
    await editConfigFile(file, JSON_CONFIG, (doc) => {
      childTable(doc, 'projects')['/work/run-2'] = { hasTrustDialogAccepted: true };
      doc.other = 1;
    });
    await reclaimDeadLeases(root);
    expect(JSON.parse(await fs.readFile(file, 'utf8'))).toEqual({ other: 1 });
  });

  it("never reclaims a live owner's lease", async () => {
    const file = path.join(root, 'home', 'trustedFolders.json');
    await takeLease(root, file, 'JSON', ['/work/run-3'], describeCurrentOwner());
    await editConfigFile(file, JSON_CONFIG, (doc) => {
      doc['/work/run-3'] = 'TRUST_FOLDER';
    });
    expect(await reclaimDeadLeases(root)).toEqual([]);
    expect(JSON.parse(await fs.readFile(file, 'utf8'))).toEqual({ '/work/run-3': 'TRUST_FOLDER' });
    expect((await listLeases(root)).leases).toHaveLength(1);
  });

  it('treats a recycled pid (same pid, other start time) as a dead owner', async () => {
    const file = path.join(root, 'home', 'trustedFolders.json');
    await takeLease(root, file, 'JSON', ['/work/run-4'], { pid: process.pid, start_time: '1' });
    await editConfigFile(file, JSON_CONFIG, (doc) => {
      doc['/work/run-4'] = 'TRUST_FOLDER';
    });
    expect(await reclaimDeadLeases(root)).toHaveLength(1);
    expect(JSON.parse(await fs.readFile(file, 'utf8'))).toEqual({});
  });
});

describe('config edits', () => {
  it('an edit that changes nothing leaves the file untouched (same inode and mtime); a change replaces it', async () => {
    const config = path.join(root, 'home', '.codex', 'config.toml');
    const setBase = (doc: Record<string, unknown>): void => {
      doc.check_for_update_on_startup = false;
      childTable(doc, 'analytics').enabled = false;
    };
    await editConfigFile(config, TOML_CONFIG, setBase);
    const first = await fs.stat(config);
    await editConfigFile(config, TOML_CONFIG, setBase);
    const again = await fs.stat(config);
    expect([again.ino, again.mtimeMs]).toEqual([first.ino, first.mtimeMs]);
    await editConfigFile(config, TOML_CONFIG, (doc) => {
      childTable(doc, 'projects')['/work/run-4'] = { trust_level: 'trusted' };
    });
    expect((await fs.stat(config)).ino).not.toBe(first.ino);
    expect(parseToml(await fs.readFile(config, 'utf8'))).toEqual({
      check_for_update_on_startup: false,
      analytics: { enabled: false },
      projects: { '/work/run-4': { trust_level: 'trusted' } },
    });
  });
});
