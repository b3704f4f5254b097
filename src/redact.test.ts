import { describe, expect, test } from 'vitest';
import { Redactor } from './redact.js';

describe('Redactor: a secret in every form a service may echo it in', () => {
  const key = 'sk-secret-value-1234567890abcdef';
  const r = new Redactor({ GATEWAY_API_KEY: key });
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  test.each([
    ['whole', `bad key ${key}`],
    ['percent-encoded', `url ?key=${encodeURIComponent(key)}`],
    ['without its sk- prefix', `token ${key.slice(3)}`],
    ['base64-encoded', `credential ${b64(key)}`],
    ['its secret part base64-encoded', `credential ${b64(key.slice(3))}`],
    ['base64-encoded after one byte', `Basic ${b64(`:${key}`)}`],
    ['base64-encoded after two bytes', `Basic ${b64(`x:${key}`)}`],
    ['base64-encoded after three bytes', `Basic ${b64(`ab:${key}`)}`],
    ['base64-encoded after a user name', `Basic ${b64(`user:${key}`)}`],
  ])('%s', (_what, text) => {
    const out = r.redact(text);
    expect(out).toContain('$GATEWAY_API_KEY');
    expect(out).not.toContain(key.slice(3, 20));
  });
  test('a short value is only replaced whole, and other text is left alone', () => {
    const short = new Redactor({ X: 'sk-abcd' });
    expect(short.redact('abcd and sk-abcd')).toBe('abcd and $X');
  });
});
