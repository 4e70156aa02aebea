// `node --import <this file>`: appends the URL of every file: module the process loads to $AH_IMPORT_LOG
// (tests/contract/cli-imports.contract.test.ts checks what a command loads).
import { register } from 'node:module';

register(new URL('./hooks.mjs', import.meta.url), { data: { log: process.env.AH_IMPORT_LOG } });
