#!/usr/bin/env node
// `service-conformance-compare RUN1 RUN2 ...`: `npm run compare --` of an installed copy (a gate: exit 1 when a
// requirement newly fails in the last run).
import { register } from 'tsx/esm/api';

register();
await import('../scripts/compare.ts');
