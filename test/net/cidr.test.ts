import { describe, expect, it } from 'vitest';
import { clientAddress, networkMatcher, normalizeCidr } from '../../src/net/cidr.ts';

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
    expect(clientAddress('127.0.0.1', '10.0.0.9, not-an-ip', proxies)).toBe('10.0.0.9');
  });
});
