/**
 * The scripted model server as the wire contract tests drive it: servers started in a test are closed after it,
 * and SSE bodies are read back block by block.
 */
import { afterEach, expect } from 'vitest';
import type { ModelScript, ModelServer } from '../../src/model/index.js';
import { startModelServer } from '../../src/engines/model-server.js';

/** Registers an `afterEach` that closes every server it started; returns how to start one on a script. */
export function useScriptedServers(): (script?: ModelScript | null) => Promise<ModelServer> {
  const servers: ModelServer[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });
  return async (script = null) => {
    const server = await startModelServer({ script });
    servers.push(server);
    return server;
  };
}

/** Parses an SSE body into its events, checking each block is `event: <type>\ndata: <json>`. */
export function sseEvents(text: string): Array<{ event: string; data: any }> {
  expect(text.endsWith('\n\n')).toBe(true);
  return text
    .split('\n\n')
    .filter((block) => block !== '')
    .map((block) => {
      const lines = block.split('\n');
      expect(lines).toHaveLength(2);
      expect(lines[0]).toMatch(/^event: /);
      expect(lines[1]).toMatch(/^data: /);
      return { event: lines[0]!.slice('event: '.length), data: JSON.parse(lines[1]!.slice('data: '.length)) };
    });
}
