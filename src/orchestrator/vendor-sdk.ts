/**
 * The vendor SDKs (`openai`, `@anthropic-ai/sdk`) are optional peer dependencies: nothing imports them until an
 * HTTP caller is created, so `agent-harness` and its other entries load without them. A missing one is
 * DEPENDENCY_MISSING naming the package and the command that installs it.
 */
import type AnthropicClient from '@anthropic-ai/sdk';
import type OpenAIClient from 'openai';
import { loadOptionalPeer } from '../runtime/optional-peer.js';
import type { VendorErrorClasses } from './vendor-error-classes.js';

/** The `openai` package's default export (the client class with its error classes). */
export type OpenAiSdk = typeof OpenAIClient;
/** The `@anthropic-ai/sdk` package's default export (the client class with its error classes). */
export type AnthropicSdk = typeof AnthropicClient;

/** Loads the `openai` package (DEPENDENCY_MISSING when it is not installed). */
export function loadOpenAiSdk(): Promise<OpenAiSdk> {
  return loadOptionalPeer({
    packages: ['openai'],
    neededBy: 'the HTTP caller',
    load: async () => (await import('openai')).default,
  });
}

/** Loads the `@anthropic-ai/sdk` package (DEPENDENCY_MISSING when it is not installed). */
export function loadAnthropicSdk(): Promise<AnthropicSdk> {
  return loadOptionalPeer({
    packages: ['@anthropic-ai/sdk'],
    neededBy: 'the HTTP caller',
    load: async () => (await import('@anthropic-ai/sdk')).default,
  });
}

/** The error classes of a loaded SDK. */
export function vendorErrorClasses(sdk: OpenAiSdk | AnthropicSdk): VendorErrorClasses {
  return { abort: sdk.APIUserAbortError, timeout: sdk.APIConnectionTimeoutError, connection: sdk.APIConnectionError };
}
