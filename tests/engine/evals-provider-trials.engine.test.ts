/**
 * Trials through the provider API with the real codex CLI (issue 45 item 1): three trials, each its own audited run;
 * trial 1's first attempt meets a scripted HTTP 500 and is rerun (classified infrastructure from its audit), trial 2
 * writes nothing and fails its check (task). Bad trial options are CONFIG_INVALID before any run.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runProviderTrials } from '../../src/public/providers.js';
import { turns } from '../../src/model/index.js';
import { scaled } from '../helpers/load-scaled.js';

describe('runProviderTrials on codex', () => {
  it('runs, reruns an infrastructure failure, classifies and counts', { timeout: scaled(300_000) }, async () => {
    const { records, statistics } = await runProviderTrials(
      { provider: 'codex', prompt: 'Write out.txt.' },
      {
        trials: 3,
        concurrency: 3,
        script: ({ trial, retry }) => ({
          version: 1,
          turns:
            trial === 1 && retry === 0
              ? [turns.error(500, 'upstream exploded')]
              : trial === 2
                ? [turns.final('no.')]
                : [turns.shell("printf 'x\\n' > out.txt"), turns.final('done')],
        }),
        check: (_events, { runDir }) => {
          expect(runDir && fs.existsSync(path.join(runDir, 'out.txt')), `no out.txt in ${runDir}`).toBe(true);
        },
      },
    );
    expect(statistics).toEqual([
      expect.objectContaining({ n: 3, passed: 2, infra_failed: 0, infra_retries: 1, strip: 'PPF' }),
    ]);
    expect(records[1]).toMatchObject({ outcome: 'passed', infraRetries: 1, retriedAuditDirs: [expect.any(String)] });
    expect(records[2]).toMatchObject({ outcome: 'failed', failureClass: 'task' });
    expect(new Set(records.map((r) => r.runId)).size).toBe(3);
  });

  it('rejects bad options before any run', async () => {
    await expect(runProviderTrials({ provider: 'codex', prompt: 'x' }, { trials: 1.5 })).rejects.toMatchObject({
      code: 'CONFIG_INVALID',
      message: expect.stringContaining('runProviderTrials() trials = 1.5'),
    });
    await expect(
      runProviderTrials({ provider: 'codex', prompt: 'x' }, { trials: 2, arms: ['baseline'] }),
    ).rejects.toMatchObject({
      code: 'CONFIG_INVALID',
      message: expect.stringContaining('arms'),
    });
  });
});
