/**
 * Script intents (`write_file`, `use_skill`): lowered to shell turns that do exactly that under a real shell.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isAgentHarnessError } from '../../src/errors/index.js';
import { mcpToolName, parseModelScript, turns, useSkillCommand } from '../../src/model/index.js';
import { startModelServer } from '../../src/engines/model-server.js';
import { thrownBy } from '../helpers/errors.js';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-intents-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

function bash(command: string): { status: number | null; stdout: string } {
  const result = spawnSync('bash', ['-lc', command], { cwd: dir, encoding: 'utf8' });
  return { status: result.status, stdout: result.stdout };
}

describe('script intents', () => {
  it('parses write_file and use_skill from JSON into shell turns', () => {
    const script = parseModelScript({
      version: 1,
      turns: [
        { type: 'write_file', path: 'a.txt', content: 'x' },
        { type: 'use_skill', name: 'demo-hello' },
        { type: 'final', text: 'ok' },
      ],
    });
    expect(script.turns.map((t) => t.type)).toEqual(['shell', 'shell', 'final']);
  });

  it('writes the content byte for byte, whatever it holds', () => {
    const content = 'line 1\nit\'s "quoted" $(touch pwned) `x` \\ end\n';
    const turn = turns.writeFile('out dir file.txt', content);
    expect(turn.type).toBe('shell');
    expect(bash((turn as { command: string }).command).status).toBe(0);
    expect(fs.readFileSync(path.join(dir, 'out dir file.txt'), 'utf8')).toBe(content);
    expect(fs.existsSync(path.join(dir, 'pwned'))).toBe(false);
  });

  it('reads the SKILL.md of the named skill from the engine skill root', () => {
    fs.mkdirSync(path.join(dir, '.codex', 'skills', 'demo-hello'), { recursive: true });
    fs.writeFileSync(path.join(dir, '.codex', 'skills', 'demo-hello', 'SKILL.md'), 'skill body\n');
    const run = bash(useSkillCommand('demo-hello'));
    expect(run).toEqual({ status: 0, stdout: 'skill body\n' });
  });

  it('rejects a hostile skill name', () => {
    const error = thrownBy(() =>
      parseModelScript({ version: 1, turns: [{ type: 'use_skill', name: '../x; rm -rf /' }] }, 'hostile.json'),
    );
    expect(isAgentHarnessError(error, 'MODEL_SCRIPT_INVALID')).toBe(true);
    expect(
      isAgentHarnessError(
        thrownBy(() => turns.useSkill('$(id)')),
        'MODEL_SCRIPT_INVALID',
      ),
    ).toBe(true);
  });
});

describe('native tools for intents', () => {
  it("an intent keeps what it was, so a wire can call the engine's own tool; without the tool it stays shell", async () => {
    const {
      nativeIntentCall,
      requestWorkingDirectory,
      parseModelScript: parse,
    } = await import('../../src/model/script.js');
    const [write, skill] = parse({
      version: 1,
      turns: [
        { type: 'write_file', path: 'a/b.txt', content: 'x' },
        { type: 'use_skill', name: 'demo-hello' },
      ],
    }).turns as Array<{ type: 'shell'; command: string; intent?: never }>;
    expect(write).toMatchObject({ type: 'shell', intent: { kind: 'write_file', path: 'a/b.txt', content: 'x' } });
    const table = {
      write: { tool: 'Write', pathKey: 'file_path', contentKey: 'content', absolute: true },
      skill: { tool: 'Skill', nameKey: 'skill' },
    };
    expect(nativeIntentCall(write!, ['Bash', 'Write'], table, '/run/dir')).toEqual({
      name: 'Write',
      args: { file_path: '/run/dir/a/b.txt', content: 'x' },
    });
    // No working directory known for an absolute-path tool, or the tool not offered: the shell command is used.
    expect(nativeIntentCall(write!, ['Bash', 'Write'], table, null)).toBeNull();
    expect(nativeIntentCall(skill!, ['Bash'], table, '/run/dir')).toBeNull();
    expect(nativeIntentCall(skill!, ['Skill'], table, null)).toEqual({ name: 'Skill', args: { skill: 'demo-hello' } });
    expect(nativeIntentCall({ type: 'shell' } as never, ['Write'], table, '/x')).toBeNull();
    expect(requestWorkingDirectory({ system: 'Working directory: /tmp/run-1\nPlatform: linux' })).toBe('/tmp/run-1');
    expect(requestWorkingDirectory({ input: '<cwd>/tmp/run-2</cwd>' })).toBe('/tmp/run-2');
    expect(requestWorkingDirectory({ messages: [] })).toBeNull();
  });

  it("engines of one wire that share tool names: each request gets its own engine's arguments", async () => {
    const { nativeIntentCall } = await import('../../src/model/script.js');
    const { loadEngineFacts } = await import('../../src/engines/registry.js');
    const chat = await Promise.all(
      ['iflow', 'opencode', 'qwen', 'copilot'].map(async (id) => (await loadEngineFacts(id)).tools),
    );
    const [skill] = parseModelScript({ version: 1, turns: [{ type: 'use_skill', name: 'greet-file' }] })
      .turns as never[];
    // opencode 1.18.33 offers `bash`, `write` and `skill`, but its skill tool is not used (it needs ripgrep): the
    // intent stays a shell read, and copilot's and qwen's `{skill}` argument is never sent to opencode.
    expect(nativeIntentCall(skill!, ['bash', 'read', 'write', 'edit', 'skill'], chat, '/w')).toBeNull();
    expect(nativeIntentCall(skill!, ['bash', 'view', 'create', 'edit', 'skill'], chat, '/w')).toEqual({
      name: 'skill',
      args: { skill: 'greet-file' },
    });
    expect(nativeIntentCall(skill!, ['run_shell_command', 'write_file', 'skill'], chat, '/w')).toEqual({
      name: 'skill',
      args: { skill: 'greet-file' },
    });
  });
});

describe('mcp_tool intent', () => {
  it('names the tool as each engine offers it, and falls back to a failing shell call that says why', () => {
    expect(mcpToolName(['Bash', 'mcp__echo__echo'], 'echo', 'echo')).toBe('mcp__echo__echo');
    expect(mcpToolName(['bash', 'echo_echo'], 'echo', 'echo')).toBe('echo_echo');
    expect(mcpToolName(['run_shell_command', 'echo'], 'echo', 'echo')).toBe('echo');
    expect(mcpToolName(['exec_command', 'mcp__echo'], 'echo', 'echo')).toBe('mcp__echo__echo');
    expect(mcpToolName(['exec_command'], 'echo', 'echo')).toBeNull();
    const turn = parseModelScript({
      version: 1,
      turns: [{ type: 'mcp_tool', server: 'echo', tool: 'echo', arguments: { text: 'hi' } }],
    }).turns[0]!;
    expect(turn).toMatchObject({
      type: 'shell',
      intent: { kind: 'mcp_tool', server: 'echo', tool: 'echo', arguments: { text: 'hi' } },
    });
    const run = spawnSync('bash', ['-lc', (turn as { command: string }).command], { encoding: 'utf8' });
    expect(run.status).toBe(3);
    expect(run.stderr).toContain('offered no MCP tool echo of server echo');
    expect(
      isAgentHarnessError(
        thrownBy(() => parseModelScript({ version: 1, turns: [{ type: 'mcp_tool', server: 'a b', tool: 'x' }] })),
        'MODEL_SCRIPT_INVALID',
      ),
    ).toBe(true);
  });

  it('codex: a tool of a deferred namespace is called as {namespace, name}', async () => {
    const server = await startModelServer({
      script: { version: 1, turns: [turns.mcpTool('echo', 'echo', { text: 'hi' })] },
    });
    try {
      const input = [
        {
          type: 'message',
          role: 'developer',
          content: [{ type: 'input_text', text: '<tools>\nDeferred tool namespaces:\n- mcp__echo\n</tools>' }],
        },
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'go' }] },
      ];
      const response = await fetch(`${server.url}/v1/responses`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-6-sol', input, stream: false }),
      });
      const body = JSON.stringify(await response.json());
      expect(body).toContain('"namespace":"mcp__echo"');
      expect(body).toContain('"name":"echo"');
    } finally {
      await server.close();
    }
  });
});
