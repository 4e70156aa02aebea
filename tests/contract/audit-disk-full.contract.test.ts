/**
 * A full disk during an attempt: the run root is a 1 MiB tmpfs (mounted in a user + mount namespace of the
 * test's own, so nothing of the host is touched) and the fake engine prints 2 MiB. The CLI ends with
 * AUDIT_WRITE_FAILED naming the files it could not write, no stack, and leaves no temp files behind.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { probeNamespaces } from '../../src/runtime/isolation/probe.js';
import { BIN, createCliSandbox, installFakeEngine, type CliSandbox } from '../helpers/cli.js';
import { scaled } from '../helpers/load-scaled.js';

const support = probeNamespaces();
let sandbox: CliSandbox;

beforeAll(() => {
  sandbox = createCliSandbox();
  const line = JSON.stringify({
    type: 'item.completed',
    item: { id: 'item_0', type: 'agent_message', text: 'x'.repeat(500) },
  });
  const big = path.join(sandbox.root, 'big.jsonl');
  fs.writeFileSync(big, `${line}\n`.repeat(4000));
  installFakeEngine(sandbox, 'codex', { stdoutFile: big });
  fs.mkdirSync(path.join(sandbox.root, 'full'));
});
afterAll(() => sandbox.cleanup());

describe.skipIf(!support.available)(`disk full (${support.reason ?? 'tmpfs in a mount namespace'})`, () => {
  it('ends AUDIT_WRITE_FAILED with what was not written, no stack, no temp files', () => {
    const full = path.join(sandbox.root, 'full');
    const quoted = [process.execPath, BIN, 'start', '--prompt', 'hi', 'codex'].map((a) => `'${a}'`).join(' ');
    const script = `mount -t tmpfs -o size=1m tmpfs '${full}' && ${quoted} > /dev/null; status=$?; find '${full}' -name '*.tmp'; exit $status`;
    const result = spawnSync(support.unshare!, ['--map-root-user', '--mount', '/bin/sh', '-c', script], {
      cwd: sandbox.root,
      env: { ...sandbox.env, AGENT_HARNESS_RUN_ROOT: path.join(full, 'runs') },
      encoding: 'utf8',
      timeout: scaled(120_000),
    });
    expect(result.status, result.stderr).toBe(1);
    expect(result.stderr).toMatch(
      /error AUDIT_WRITE_FAILED: The audit of attempt 1 is incomplete: could not write .*stdout\.1\.log.*ENOSPC/,
    );
    expect(result.stderr).not.toMatch(/^\s+at /m);
    // The summary is still printed: the verdict is kept.
    expect(result.stderr).toContain('Completion: failed');
    // No half-written temp file is left in the full run root.
    expect(result.stdout.trim()).toBe('');
  });
});
