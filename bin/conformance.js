#!/usr/bin/env node
// `service-conformance [options]` (also `npx service-conformance`): the conformance command of an installed copy of
// the suite, the same as `npm run conformance --` in a clone. It loads src/cli.ts through tsx (a dependency of this
// package). Paths the user gives (--report-dir, --config, ...) are resolved against the current directory, the
// suite's own files (suites/, specs/, the embedded references in fixtures/) against the package root.
import { register } from 'tsx/esm/api';

// The plain JavaScript dependencies the command loads, loaded before tsx's hooks are registered: through them every
// module of vitest's runner alone took about 0.7 s of each start, without them 0.25 s. (The suite's own TypeScript
// still goes through tsx; vitest loads the suites in its worker through vite.)
await Promise.all(
  ['vitest/node', 'undici', 'ajv/dist/2020.js', 'ajv-formats', '@apidevtools/json-schema-ref-parser', 'allure-js-commons'].map((m) => import(m)),
);
register();
const [{ main }, { EXIT_CODES }] = await Promise.all([import('../src/cli.ts'), import('../src/verdicts.ts')]);
main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e) => {
    process.stderr.write(`service-conformance: internal error: ${e?.stack ?? String(e)}\n`);
    process.exit(EXIT_CODES.error);
  },
);
