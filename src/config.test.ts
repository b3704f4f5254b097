import { describe, expect, test } from 'vitest';
import { chmodSync, chownSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ConfigError, describeConfig, parseConfig } from './config.js';
import { scratchDir } from '../fixtures/scratch.js';

const cfg = (argv: string[], env: NodeJS.ProcessEnv = {}) => {
  const p = parseConfig(argv, env);
  if (p.help) throw new Error('help');
  return p.config;
};

describe('configuration', () => {
  test('no URL at all: embedded reference deployments, both services', () => {
    const c = cfg([]);
    expect(c.embedded).toBe(true);
    expect(c.services).toEqual(['feed', 'gateway']);
  });

  test('flags beat the environment, which beats the config file', () => {
    const dir = scratchDir('cfg-');
    const file = path.join(dir, 'c.json');
    writeFileSync(file, JSON.stringify({ feedUrl: 'http://file.invalid', budget: 7, timeout: 3 }));
    const c = cfg(['--config', file, '--budget', '9'], { FEED_BASE_URL: 'http://env.invalid/' });
    expect(c.feedUrl).toBe('http://env.invalid');
    expect(c.budget).toBe(9);
    expect(c.timeoutMs).toBe(3000);
  });

  test('--concurrency: default 4, from the flag, CONFORMANCE_CONCURRENCY or the file, 1..64; a bad value names its source', () => {
    expect(cfg([]).concurrency).toBe(4);
    expect(cfg(['--concurrency', '1']).concurrency).toBe(1);
    expect(cfg([], { CONFORMANCE_CONCURRENCY: '6' }).concurrency).toBe(6);
    expect(cfg(['--concurrency', '2'], { CONFORMANCE_CONCURRENCY: '6' }).concurrency).toBe(2);
    expect(() => cfg(['--concurrency', '0'])).toThrow(/--concurrency must be a whole number from 1 to 64, got "0"/);
    expect(() => cfg([], { CONFORMANCE_CONCURRENCY: 'many' })).toThrow(/CONFORMANCE_CONCURRENCY must be a whole number/);
    expect(() => cfg([], { CONFORMANCE_CONCURRENCY: '' })).toThrow(/CONFORMANCE_CONCURRENCY must be a whole number/);
  });

  test('a service without a URL is skipped when another URL is given', () => {
    const c = cfg(['--gateway-url', 'https://gw.invalid']);
    expect(c.embedded).toBe(false);
    expect(c.services).toEqual(['gateway']);
  });

  test.each([
    [['--feed-url', 'not a url'], /--feed-url is not a URL with a scheme/],
    [['--feed-url', 'localhost:8080'], /--feed-url is not a URL with a scheme: "localhost:8080" \(expected e\.g\. .* or http:\/\/localhost:8080\)/],
    [['--gateway-url', 'gw.example.com'], /--gateway-url is not a URL with a scheme/],
    [['--feed-url', ''], /--feed-url is set but empty/],
    [['--seed', '-123'], /--seed=-123/],
    [['--feed-url', 'ftp://x.invalid'], /must use http or https/],
    [['--feed-url', 'https://u:p@x.invalid'], /must not carry credentials/],
    [['--service', 'mail'], /--service must be one of feed, gateway, all/],
    [['--service', 'gateway', '--feed-url', 'http://x.invalid'], /its URL is not set/],
    [['--bogus'], /Unknown option '--bogus'/],
    [['--runs', '0'], /--runs must be a whole number from 1 to 10000/],
    [['--timeout', 'ten'], /--timeout must be a whole number/],
    [['--config', '/nonexistent/c.json'], /cannot be read/],
  ])('%j is refused with a message naming the setting', (argv, message) => {
    expect(() => parseConfig(argv, {})).toThrow(ConfigError);
    expect(() => parseConfig(argv, {})).toThrow(message);
  });

  test.each([
    [{ FEED_BASE_URL: '' }, /FEED_BASE_URL is set but empty.*never falls back to the embedded reference deployments/],
    [{ GATEWAY_URL: '' }, /GATEWAY_URL is set but empty/],
    [{ FEED_BASE_URL: '', GATEWAY_URL: '' }, /FEED_BASE_URL is set but empty/],
    [{ GATEWAY_URL: 'localhost:8080' }, /GATEWAY_URL is not a URL with a scheme/],
  ])('%j (what a CI job with missing secrets gets) is a configuration error, never the embedded references', (env, message) => {
    expect(() => parseConfig([], env)).toThrow(ConfigError);
    expect(() => parseConfig([], env)).toThrow(message);
  });

  test('--allow-incomplete and the declared "unchecked" list are read; an unknown or client-rule id there is refused', () => {
    const dir = scratchDir('cfg-');
    const good = path.join(dir, 'k.json');
    writeFileSync(good, JSON.stringify({ deviations: [], unchecked: [{ id: 'gw-key-ip-allow-list', reason: 'no second egress IP in CI' }] }));
    const c = cfg(['--known-deviations', good, '--allow-incomplete', '--gateway-url', 'https://gw.invalid']);
    expect(c.unchecked).toEqual([{ id: 'gw-key-ip-allow-list', reason: 'no second egress IP in CI' }]);
    expect(c.allowIncomplete).toBe(true);
    expect(cfg([]).allowIncomplete).toBe(false);
    const unknown = path.join(dir, 'u.json');
    writeFileSync(unknown, JSON.stringify({ unchecked: [{ id: 'gw-no-such-rule', reason: 'whatever' }] }));
    expect(() => parseConfig(['--known-deviations', unknown], {})).toThrow(/gw-no-such-rule, which is not a requirement id/);
    const client = path.join(dir, 'c.json');
    writeFileSync(client, JSON.stringify({ unchecked: [{ id: 'gw-client-retry-cap', reason: 'whatever' }] }));
    expect(() => parseConfig(['--known-deviations', client], {})).toThrow(/a client rule/);
  });

  test('a config file holding a secret, or an unknown setting, is refused', () => {
    const dir = scratchDir('cfg-');
    const secret = path.join(dir, 's.json');
    writeFileSync(secret, JSON.stringify({ apiKey: 'sk-x' }));
    expect(() => parseConfig(['--config', secret], {})).toThrow(/looks like a secret; secrets come only from the environment/);
    const unknown = path.join(dir, 'u.json');
    writeFileSync(unknown, JSON.stringify({ colour: 'red' }));
    expect(() => parseConfig(['--config', unknown], {})).toThrow(/unknown setting "colour"/);
    const broken = path.join(dir, 'b.json');
    writeFileSync(broken, '{ nope');
    expect(() => parseConfig(['--config', broken], {})).toThrow(/not valid JSON/);
  });

  test('a profile override is validated against the profile schema', () => {
    const dir = scratchDir('cfg-');
    const bad = path.join(dir, 'p.json');
    writeFileSync(bad, JSON.stringify({ gateway: { versionValue: 'yesterday' } }));
    expect(() => parseConfig(['--profile', bad], {})).toThrow(/versionValue must match pattern/);
    const good = path.join(dir, 'g.json');
    writeFileSync(good, JSON.stringify({ gateway: { vendorCKeyHeader: 'x-goog-api-key' } }));
    const c = cfg(['--profile', good, '--gateway-url', 'https://gw.invalid']);
    expect(c.profile.gateway.vendorCKeyHeader).toBe('x-goog-api-key');
    expect(c.profile.gateway.versionHeader).toBe('vendorb-version');
  });

  test.each([
    // The misspelt variable of a CI job: its key would otherwise be replaced silently by the embedded one.
    [
      { GATEWAY_BASE_URL: 'https://gw.example.com', GATEWAY_API_KEY: 'sk-real' },
      /GATEWAY_BASE_URL is not a variable this suite reads: did you mean GATEWAY_URL\?/,
    ],
    [{ FEED_URL: 'https://feed.example.com' }, /FEED_URL is not a variable this suite reads: did you mean FEED_BASE_URL\?/],
    [{ GATEWAY_KEY: 'sk-real' }, /GATEWAY_KEY is not a variable this suite reads: did you mean GATEWAY_API_KEY\?/],
    [{ CONFORMANCE_CONCURENCY: '2' }, /CONFORMANCE_CONCURENCY is not a variable this suite reads: did you mean CONFORMANCE_CONCURRENCY\?/],
    // Anything configured for a deployment, with no URL: a key, a merged id, a model, a profile, a deviations or config file.
    [{ GATEWAY_API_KEY: 'sk-real' }, /no URL is configured .* but GATEWAY_API_KEY is set/],
    [{ GATEWAY_EXPIRED_KEY: '' }, /but GATEWAY_EXPIRED_KEY is set/],
    [{ FEED_MERGED_STORY_ID: 'abc' }, /but FEED_MERGED_STORY_ID is set/],
    [{ GATEWAY_MODEL: 'm' }, /but GATEWAY_MODEL is set/],
    [{ GATEWAY_REALTIME_PATH: '/rt' }, /but GATEWAY_REALTIME_PATH is set/],
  ])('%j without a URL: exit 2 naming what was set (and the likely typo), never the embedded references', (env, message) => {
    expect(() => parseConfig([], env)).toThrow(ConfigError);
    expect(() => parseConfig([], env)).toThrow(message);
    expect(() => parseConfig([], env)).toThrow(/the embedded reference deployments are checked only when nothing at all is configured/);
  });

  test('--profile, --known-deviations or a config file without a URL: a configuration for a deployment, exit 2', () => {
    const dir = scratchDir('cfg-');
    const profile = path.join(dir, 'p.json');
    writeFileSync(profile, JSON.stringify({ gateway: { vendorCKeyHeader: 'x-goog-api-key' } }));
    const deviations = path.join(dir, 'k.json');
    writeFileSync(deviations, JSON.stringify({ unchecked: [{ id: 'gw-key-ip-allow-list', reason: 'no second egress IP in CI' }] }));
    const config = path.join(dir, 'c.json');
    writeFileSync(config, JSON.stringify({ budget: 100 }));
    expect(() => parseConfig(['--profile', profile], {})).toThrow(/but --profile is set/);
    expect(() => parseConfig(['--known-deviations', deviations], {})).toThrow(/but --known-deviations is set/);
    expect(() => parseConfig(['--config', config], {})).toThrow(/but --config is set/);
    expect(() => parseConfig([], { CONFORMANCE_CONFIG: config })).toThrow(/but CONFORMANCE_CONFIG is set/);
  });

  test('what a zero-config run may set: how the run goes (flags, CONFORMANCE_CONCURRENCY, the rate-limit probe), not what it checks', () => {
    const env = {
      CONFORMANCE_CONCURRENCY: '2',
      CONFORMANCE_PROBE_RATE_LIMIT: '1',
      NODE_EXTRA_CA_CERTS: '/etc/ca.pem',
      GATEWAY_HOST_OF_SOMETHING_ELSE_X: undefined,
    };
    const p = parseConfig(['--service', 'feed', '--grep', 'items', '--no-html', '--seed=-3', '--runs', '2', '--shard', '1/2', '--report-dir', 'r'], env);
    expect(p.help).toBe(false);
    if (!p.help) {
      expect(p.config.embedded).toBe(true);
      expect(p.warnings).toEqual([]);
    }
  });

  test('an unknown FEED_/GATEWAY_/CONFORMANCE_ variable beside a URL is a warning naming the likely typo; the run goes on', () => {
    const p = parseConfig(['--gateway-url', 'https://gw.invalid'], { GATEWAY_API_KEY: 'sk-x', GATEWAY_EXPIRED_KEYS: 'sk-y', FEED_BASE_URL_2: 'x' });
    expect(p.help).toBe(false);
    if (!p.help) {
      expect(p.config.services).toEqual(['gateway']);
      expect(p.warnings).toEqual([
        'GATEWAY_EXPIRED_KEYS is not a variable this suite reads: did you mean GATEWAY_EXPIRED_KEY? (ignored)',
        'FEED_BASE_URL_2 is not a variable this suite reads: did you mean FEED_BASE_URL? (ignored)',
      ]);
    }
  });

  test('the printed configuration masks every secret', () => {
    const env = { GATEWAY_API_KEY: 'sk-abcdefghijklmnopqrstuvwxyz', GATEWAY_MANAGEMENT_TOKEN: 'pat-0123456789abcdef' };
    const text = describeConfig(cfg(['--gateway-url', 'https://gw.invalid'], env), env);
    expect(text).not.toContain('abcdefghij');
    expect(text).not.toContain('0123456789');
    expect(text).toMatch(/GATEWAY_API_KEY\s+sk-…\(29 chars\)/);
    expect(text).toMatch(/GATEWAY_EXPIRED_KEY\s+\(unset\)/);
  });
});

describe('the caches of a run: nothing under node_modules, nothing two runs could break for each other', () => {
  test("vitest's results cache is off; the module cache is under the temporary directory, one per checkout and dependency set", async () => {
    const { moduleCache, runnerCaches } = await import('./cli.js');
    const tmp = scratchDir('tmp-');
    const clone = scratchDir('clone-');
    mkdirSync(path.join(clone, 'node_modules'));
    writeFileSync(path.join(clone, 'node_modules', '.package-lock.json'), '{"lockfileVersion":3}');
    const cache = moduleCache(clone, tmp);
    expect(cache.fsModuleCache).toBe(true);
    expect(path.relative(tmp, cache.fsModuleCachePath!)).not.toMatch(/^\.\./);
    expect(cache.fsModuleCachePath).not.toContain('node_modules');
    // The same checkout and dependencies share it (its writes are atomic); another checkout, or changed dependencies, do not.
    expect(moduleCache(clone, tmp)).toEqual(cache);
    expect(moduleCache(scratchDir('clone-'), tmp).fsModuleCachePath).not.toBe(cache.fsModuleCachePath);
    writeFileSync(path.join(clone, 'node_modules', '.package-lock.json'), '{"lockfileVersion":3,"packages":{}}');
    expect(moduleCache(clone, tmp).fsModuleCachePath).not.toBe(cache.fsModuleCachePath);
    // What the command gives vitest: no path inside the suite's node_modules, no results cache.
    const given = runnerCaches();
    expect(given.cache).toBe(false);
    expect(JSON.stringify(given)).not.toContain('node_modules');
  });

  test('a cache folder another user could write (or owns) is not used: the run goes without it', async () => {
    const { moduleCache } = await import('./cli.js');
    const tmp = scratchDir('tmp-');
    const clone = scratchDir('clone-');
    const { fsModuleCachePath } = moduleCache(clone, tmp);
    const base = path.dirname(fsModuleCachePath!);
    chmodSync(base, 0o777);
    expect(moduleCache(clone, tmp)).toEqual({ fsModuleCache: false });
    chmodSync(base, 0o700);
    expect(moduleCache(clone, tmp).fsModuleCache).toBe(true);
    if (process.getuid?.() === 0) {
      chownSync(base, 4242, 4242);
      expect(moduleCache(clone, tmp)).toEqual({ fsModuleCache: false });
    }
  });
});
