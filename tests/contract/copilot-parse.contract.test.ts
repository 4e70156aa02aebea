/**
 * GitHub Copilot CLI `--output-format json` parser, over streams recorded from the real copilot 1.0.102 against the
 * scripted model (fixtures/streams/copilot/README.md; their golden RASP/FCMP are engine-goldens.contract's): the facts
 * a run of it relies on: the session id from the `result` line, the built-in skills kept out of the offered ones, the
 * scripted faults categorized by the error table.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import os from 'node:os';
import { isCopilotTrusted, untrustCopilotFolder, writeCopilotSettings } from '../../src/engines/copilot/config.js';
import { copilotEngine } from '../../src/engines/copilot/index.js';
import { createCopilotParser } from '../../src/engines/copilot/parse.js';
import type { ParserOutput } from '../../src/engines/engine.js';
import { translateRecorded } from '../../src/translate/recorded.js';

const STREAMS = path.resolve(import.meta.dirname, '..', '..', 'fixtures', 'streams', 'copilot');

function recorded(name: string) {
  return translateRecorded(
    copilotEngine,
    { stdout: fs.readFileSync(path.join(STREAMS, `${name}.stdout.jsonl`)) },
    { runId: 'golden' },
  );
}

function parseAll(lines: readonly string[]): ParserOutput[] {
  const parser = createCopilotParser();
  return [...lines.flatMap((line) => parser.line('stdout', line)), ...parser.end()];
}

describe('copilot parser (its goldens are engine-goldens.contract.test.ts)', () => {
  it('turn1: session from the result line, one bash call with exit 0, the done marker → completed', () => {
    const { summary, judgement } = recorded('turn1');
    expect(summary.session_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(summary).toMatchObject({
      tool_calls: 1,
      completed: true,
      error: null,
      final_message: 'Wrote out.txt\n__SKILL_DONE__',
    });
    expect(judgement.state).toBe('completed');
  });

  it('turn2-resume continues the same session', () => {
    expect(recorded('turn2-resume').summary.session_id).toBe(recorded('turn1').summary.session_id);
    expect(recorded('turn2-resume').judgement.state).toBe('completed');
  });

  it('tools: skill, create (a file change) and a failing bash call; built-in skills are not offered', () => {
    const lines = fs.readFileSync(path.join(STREAMS, 'tools.stdout.jsonl'), 'utf8').split('\n');
    const outputs = parseAll(lines);
    expect(outputs.flatMap((o) => (o.type === 'engine.tool.call' ? [[o.kind, o.name]] : []))).toEqual([
      ['skill', 'skill'],
      ['file_change', 'create'],
      ['shell', 'bash'],
    ]);
    expect(outputs).toContainEqual({
      type: 'engine.file.change',
      changes: [{ path: '/home/user/project/notes.txt', kind: 'create' }],
    });
    expect(outputs.filter((o) => o.type === 'engine.tool.result').map((o) => o.exit_code)).toEqual([null, null, 1]);
    expect(outputs.find((o) => o.type === 'engine.skills.offered')).toEqual({
      type: 'engine.skills.offered',
      skills: ['demo-skill'],
      source: 'engine',
    });
    // The built-in ones are in the raw line, and nowhere in the parsed events.
    expect(lines[0]).toContain('"source":"builtin"');
    expect(JSON.stringify(outputs)).not.toContain('customize-cloud-agent');
  });

  it('mcp-stdio: a tool of a loaded MCP server (`<server>-<tool>`) is an mcp call with its result', () => {
    const outputs = parseAll(fs.readFileSync(path.join(STREAMS, 'mcp-stdio.stdout.jsonl'), 'utf8').split('\n'));
    expect(outputs.find((o) => o.type === 'engine.tool.call')).toMatchObject({ kind: 'mcp', name: 'echo-echo' });
    expect(outputs.find((o) => o.type === 'engine.tool.result')).toMatchObject({
      status: 'completed',
      output: 'echo: hi-mcp',
    });
    expect(recorded('mcp-stdio').judgement.state).toBe('completed');
  });

  it.each([
    ['error-429', 'rate_limit', 'ENGINE_RATE_LIMITED'],
    ['error-500', 'network', 'ENGINE_NETWORK_ERROR'],
    ['malformed', 'protocol', 'ENGINE_PROTOCOL_ERROR'],
    ['stall', 'network', 'ENGINE_NETWORK_ERROR'],
  ])('%s fails the attempt as %s (%s)', (name, category, code) => {
    expect(recorded(name).judgement).toMatchObject({ state: 'failed', failure: { category, code } });
  });

  it('a stream cut before its result line is never completed', () => {
    const lines = fs.readFileSync(path.join(STREAMS, 'turn1.stdout.jsonl'), 'utf8').trim().split('\n');
    const codes = parseAll(lines.slice(0, -1)).flatMap((o) => (o.type === 'diagnostic' ? [o.diagnostic.code] : []));
    expect(codes).toContain('COPILOT_TURN_NOT_ENDED');
  });
});

describe('copilot settings', () => {
  it('trusts the run dir and removes the entry again, beside the plain settings.json.lock copilot leaves', async () => {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-copilot-settings-'));
    try {
      // copilot 1.0.102 leaves an empty file `settings.json.lock` in COPILOT_HOME after a run.
      fs.writeFileSync(path.join(home, 'settings.json.lock'), '');
      const file = await writeCopilotSettings(home, '/runs/a');
      expect(await isCopilotTrusted(file, '/runs/a')).toBe(true);
      await untrustCopilotFolder(file, '/runs/a');
      expect(await isCopilotTrusted(file, '/runs/a')).toBe(false);
      expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toEqual({ autoUpdate: false });
    } finally {
      fs.rmSync(home, { recursive: true, force: true });
    }
  });

  it("trusts the run dir in config.json too (the TUI's list), under copilot's comment header, and keeps its keys", async () => {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-copilot-config-'));
    const config = path.join(home, 'config.json');
    const written = (): unknown => JSON.parse(fs.readFileSync(config, 'utf8').replace(/^\/\/.*$/gm, ''));
    try {
      // As copilot 1.0.102 writes it after its first start.
      fs.writeFileSync(
        config,
        '// User settings belong in settings.json.\n// This file is managed automatically.\n{\n  "appTipShown": true\n}\n',
      );
      const file = await writeCopilotSettings(home, '/runs/a');
      expect(fs.readFileSync(config, 'utf8')).toMatch(/^\/\/ User settings belong in settings\.json\.\n/);
      expect(written()).toEqual({ appTipShown: true, trustedFolders: ['/runs/a'] });
      // Trusted while either file lists it.
      fs.writeFileSync(file, JSON.stringify({ autoUpdate: false }));
      expect(await isCopilotTrusted(file, '/runs/a')).toBe(true);
      await untrustCopilotFolder(file, '/runs/a');
      expect(await isCopilotTrusted(file, '/runs/a')).toBe(false);
      expect(written()).toEqual({ appTipShown: true });
      // No config.json yet (a first attempt): one is written with the entry alone.
      fs.rmSync(config);
      await writeCopilotSettings(home, '/runs/b');
      expect(written()).toEqual({ trustedFolders: ['/runs/b'] });
    } finally {
      fs.rmSync(home, { recursive: true, force: true });
    }
  });
});
