#!/usr/bin/env node
// `client-conformance --service feed|gateway [options] -- <command ...>` (also `npx client-conformance`): the
// client-conformance command of an installed copy of the suite, the same as `npm run client-conformance --` in a
// clone. It loads src/client-conformance/cli.ts through tsx (a dependency of this package), which runs the command
// and exits with its status (the conformance command's: src/verdicts.ts EXIT_CODES).
import { register } from 'tsx/esm/api';

register();
await import('../src/client-conformance/cli.ts');
