#!/usr/bin/env node
// `service-conformance-merge-reports --out DIR SHARD_DIR ...`: `npm run merge-reports --` of an installed copy.
import { register } from 'tsx/esm/api';

register();
await import('../scripts/merge-reports.ts');
