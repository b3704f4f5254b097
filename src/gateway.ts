/** The gateway suite's view of the target: requests that keep the gateway's client rules, configured keys. */
import { http, baseUrl, secret } from './context.js';
import { clientRules } from './spec.js';
import type { HttpResponse, SendOptions } from './http.js';
import type { CheckTools } from './harness.js';
import type { SecretVar } from './config.js';

const rules = clientRules('gateway');

const WHAT: Record<SecretVar, string> = {
  GATEWAY_API_KEY: 'a valid sk- key',
  GATEWAY_EXPIRED_KEY: 'a key past its validity period',
  GATEWAY_DISABLED_KEY: 'a disabled key',
  GATEWAY_EXHAUSTED_KEY: 'a key beyond its quota ceiling',
  GATEWAY_IP_DENIED_KEY: "a key whose IP allow list excludes the runner's address",
  GATEWAY_RATE_LIMITED_KEY: 'a key over its per-user request limit',
  GATEWAY_MANAGEMENT_TOKEN: 'a management-panel personal access token',
};

/** The configured secret, or the check ends as skipped, naming the variable to set. */
export function requireKey(t: CheckTools, name: SecretVar): string {
  const v = secret(name);
  if (!v) t.notConfigured(`set ${name} to ${WHAT[name]}`);
  return v;
}

export function gatewaySend(path: string, o: Omit<SendOptions, 'rules' | 'service'> = {}): Promise<HttpResponse> {
  return http().send(`${baseUrl('gateway')}${path}`, { ...o, rules, service: 'gateway' });
}

export function gatewayGet(path: string, o: Omit<SendOptions, 'rules' | 'service' | 'method'> = {}): Promise<HttpResponse> {
  return gatewaySend(path, { ...o, method: 'GET' });
}
