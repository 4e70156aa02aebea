// What the bundle gives proper-lockfile for `require('graceful-fs')` (scripts/build.mjs): Node's own fs, unpatched.
module.exports = require('node:fs');
