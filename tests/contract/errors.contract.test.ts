import { describe, expect, it } from 'vitest';
import { AgentHarnessError, ERROR_CODES, isAgentHarnessError, toAgentHarnessError } from '../../src/errors/index.js';

describe('AgentHarnessError', () => {
  it('carries a stable code, a hint and serializes to JSON', () => {
    const error = new AgentHarnessError('RUN_NOT_FOUND', 'no run matches "zz"', { details: { selector: 'zz' } });
    expect(error.code).toBe('RUN_NOT_FOUND');
    expect(error.hint).toBe(ERROR_CODES.RUN_NOT_FOUND);
    expect(JSON.parse(JSON.stringify(error))).toEqual({
      code: 'RUN_NOT_FOUND',
      message: 'no run matches "zz"',
      hint: ERROR_CODES.RUN_NOT_FOUND,
      details: { selector: 'zz' },
    });
    expect(isAgentHarnessError(error, 'RUN_NOT_FOUND')).toBe(true);
    expect(isAgentHarnessError(error, 'SKILL_INVALID')).toBe(false);
  });

  it('wraps foreign errors as INTERNAL_ERROR and keeps the cause', () => {
    const cause = new TypeError('boom');
    const wrapped = toAgentHarnessError(cause);
    expect(wrapped.code).toBe('INTERNAL_ERROR');
    expect(wrapped.cause).toBe(cause);
    expect(toAgentHarnessError(wrapped)).toBe(wrapped);
  });
});
