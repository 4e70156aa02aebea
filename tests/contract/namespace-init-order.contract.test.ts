/**
 * The order in which the namespace init starts its set-up: when the mount plan came before the init was up (the
 * harness sends it while the init's Node starts, so it usually has), the filesystem's `sh` (the longer set-up, seven
 * short processes) is forked before the loopback's `ip`, so the engine's start does not wait for the `ip` fork too.
 * Told by the process ids both get in the attempt's fresh PID namespace (allocated in fork order: the init is 1),
 * recorded by stand-ins for `sh` and `ip` that then exec the real tools: nothing here depends on timing.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openIsolation } from '../../src/runtime/isolation/attempt-isolation.js';
import { buildMountPlan } from '../../src/runtime/isolation/mount-plan.js';
import { probeNamespaces } from '../../src/runtime/isolation/probe.js';
import { superviseSplit } from '../../src/runtime/process.js';

const tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'ah-init-order-')));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

const support = probeNamespaces();
const tools = support.filesystem?.tools;

/** A stand-in for `real` that appends "<name> <its pid>" to `log`, then execs the real tool (same process). */
function standIn(dir: string, name: string, real: string, log: string): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, `#!${tools!.sh}\necho "${name} $$" >> '${log}'\nexec '${real}' "$@"\n`, { mode: 0o755 });
  return file;
}

describe.skipIf(!support.available || !support.ip || !tools)(
  'the namespace init, given its plan before it is up',
  () => {
    it("forks the filesystem's sh before the loopback's ip, then runs the engine contained", async () => {
      const workspace = path.join(tmp, 'workspace');
      const standIns = path.join(tmp, 'tools');
      fs.mkdirSync(workspace);
      fs.mkdirSync(standIns);
      const log = path.join(workspace, 'forks.log');
      // The stand-ins are bound read-only into the agent's filesystem at the same path: `ip` may run after the pivot.
      const given = {
        ...support,
        ip: standIn(standIns, 'ip', support.ip!, log),
        filesystem: { ...support.filesystem!, tools: { ...tools!, sh: standIn(standIns, 'sh', tools!.sh, log) } },
      };
      const plan = buildMountPlan({
        workspace,
        readOnlyInWorkspace: [],
        writable: [],
        readOnly: [standIns],
        expose: [],
      });
      const isolation = await openIsolation({
        mode: 'require',
        modelUrl: 'http://127.0.0.1:9/v1',
        support: given,
        filesystem: true,
      });
      try {
        // The init is started, and the plan and the command sent at once: both wait for it on its lifeline.
        isolation.prestart('ignore');
        isolation.contain(plan);
        const child = isolation.launch({
          file: '/bin/sh',
          args: ['-c', 'echo ran'],
          env: {},
          cwd: workspace,
        });
        const chunks: Buffer[] = [];
        const result = await isolation.settle(
          await superviseSplit(child!, { onChunk: (_stream, chunk) => chunks.push(Buffer.from(chunk)) }),
        );
        expect(result.exitCode).toBe(0);
        expect(Buffer.concat(chunks).toString('utf8')).toContain('ran');
        expect(await isolation.contained()).toBe(true);
      } finally {
        await isolation.close();
      }
      const forks = Object.fromEntries(
        fs
          .readFileSync(log, 'utf8')
          .trim()
          .split('\n')
          .map((line) => line.split(' ') as [string, string]),
      );
      expect(Object.keys(forks).sort()).toEqual(['ip', 'sh']);
      expect(Number(forks.sh)).toBeLessThan(Number(forks.ip));
    });
  },
);
