import { describe, expect, it } from 'vitest';
import { UNKNOWN_CLIENT, clientAddress, clientNetwork, networkMatcher, normalizeCidr } from '../../src/net/cidr.ts';

describe('CIDRs', () => {
  it('normalizes both families and refuses anything else', () => {
    expect(normalizeCidr('192.168.0.0/16')).toBe('192.168.0.0/16');
    expect(normalizeCidr(' 10.1.2.3 ')).toBe('10.1.2.3/32');
    expect(normalizeCidr('2001:DB8::/32')).toBe('2001:db8::/32');
    expect(normalizeCidr('::1')).toBe('::1/128');
    for (const bad of ['10.0.0.1/8/8', '10.0.0.1/x', '10.0.0.0/33', '::/129', 'example.com', ''])
      expect(normalizeCidr(bad)).toBeUndefined();
  });

  it('match addresses of either family, including IPv4 seen through IPv6 sockets', () => {
    const allowed = networkMatcher(['10.0.0.0/8', '2001:db8::/32']);
    expect(allowed('10.200.1.1')).toBe(true);
    expect(allowed('::ffff:10.200.1.1')).toBe(true);
    expect(allowed('11.0.0.1')).toBe(false);
    expect(allowed('2001:db8::42')).toBe(true);
    expect(allowed('2001:db9::42')).toBe(false);
    expect(allowed('garbage')).toBe(false);
  });
});

describe('client address', () => {
  const proxies = networkMatcher(['127.0.0.1/32', '10.0.0.0/8']);

  it('is the socket peer when the peer is not a trusted proxy, whatever X-Forwarded-For says', () => {
    expect(clientAddress('203.0.113.9', '10.1.1.1', proxies)).toBe('203.0.113.9');
  });

  it('is the first untrusted hop from the right when the peer is a trusted proxy', () => {
    expect(clientAddress('127.0.0.1', '198.51.100.7', proxies)).toBe('198.51.100.7');
    expect(clientAddress('::ffff:127.0.0.1', '6.6.6.6, 198.51.100.7, 10.0.0.5', proxies)).toBe('198.51.100.7');
    expect(clientAddress('127.0.0.1', undefined, proxies)).toBe('127.0.0.1');
  });

  it('reads hops written with a port, as some proxies write them', () => {
    expect(clientAddress('127.0.0.1', '10.1.1.1, 203.0.113.9:51234', proxies)).toBe('203.0.113.9');
    expect(clientAddress('127.0.0.1', '10.1.1.1, [2001:db8::5]:443', proxies)).toBe('2001:db8::5');
    expect(clientAddress('127.0.0.1', '[2001:db8::6]', proxies)).toBe('2001:db8::6');
    expect(clientAddress('127.0.0.1', '198.51.100.7, 10.0.0.5:80', proxies)).toBe('198.51.100.7');
  });

  it('is unknown, never an address the client wrote, when a trusted proxy names no address', () => {
    // Left of such a hop is only what the client sent: skipping it handed the client any address
    // (an allowlist's, or a fresh budget per request).
    for (const forwarded of ['10.1.1.1, unknown', '10.1.1.1, not-an-ip', '10.1.1.1, ', '10.1.1.1, _hidden, 10.0.0.5']) {
      expect(clientAddress('127.0.0.1', forwarded, proxies), forwarded).toBe(UNKNOWN_CLIENT);
    }
    expect(networkMatcher(['0.0.0.0/0', '::/0'])(UNKNOWN_CLIENT)).toBe(false);
  });
});

describe('client network', () => {
  it('is an IPv4 address itself, and an IPv6 address its /64, written one way whatever way the address was', () => {
    expect(clientNetwork('203.0.113.9')).toBe('203.0.113.9');
    expect(clientNetwork('::ffff:203.0.113.9')).toBe('203.0.113.9');
    for (const address of [
      '2001:db8:1:2::a',
      '2001:DB8:1:2:FFFF:FFFF:FFFF:FFFF',
      '2001:0db8:0001:0002:0000:0000:0000:0000',
      '2001:db8:1:2::',
    ])
      expect(clientNetwork(address), address).toBe('2001:db8:1:2::/64');
    expect(clientNetwork('2001:db8::1')).toBe('2001:db8::/64');
    expect(clientNetwork('2001:db8:0:0:1::1')).toBe('2001:db8::/64');
    expect(clientNetwork('::1')).toBe('::/64');
    expect(clientNetwork('fe80::1%eth0')).toBe('fe80::/64');
    expect(clientNetwork('64:ff9b::192.0.2.1')).toBe('64:ff9b::/64');
    expect(clientNetwork('1:2:3:4:5:6:192.0.2.1')).toBe('1:2:3:4::/64');
  });
});
