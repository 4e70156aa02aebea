// Module hooks of register.mjs: runs in the loader thread, logs each loaded file: URL, then loads it unchanged.
import fs from 'node:fs';

let log;

export function initialize(data) {
  log = data.log;
}

export async function load(url, context, next) {
  if (log && url.startsWith('file:')) fs.appendFileSync(log, `${url.split('?')[0]}\n`);
  return next(url, context);
}
