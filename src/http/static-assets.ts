// The public assets the service serves itself (GraphiQL's and the API reference's scripts and styles,
// some 8 MB in all): compressed when the client takes gzip (a fifth to a quarter of the size), and
// with a strong ETag from their bytes, so a browser revalidates them on each use and gets 304 while
// they are unchanged. With a day's max-age and no validator, a browser kept the bundle of the version
// before an upgrade beside the new page, and fetched every byte again once the day was out.
import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';

const gzipped = promisify(gzip);

export interface StaticAsset {
  body: string | Uint8Array<ArrayBuffer>;
  type: string;
}

export interface PreparedAsset {
  type: string;
  raw: Uint8Array<ArrayBuffer>;
  /** Only when it is smaller (an image, already compressed, is not). */
  gzip: Uint8Array<ArrayBuffer> | undefined;
  etag: string;
  /** The compressed one's: another representation, whose strong tag differs (RFC 9110 §8.8.3). */
  gzipEtag: string;
}

/** Compresses off the event loop (zlib's thread pool): the GraphiQL bundle takes a moment. */
async function prepareAsset(asset: StaticAsset): Promise<PreparedAsset> {
  const raw = typeof asset.body === 'string' ? Buffer.from(asset.body) : asset.body;
  const compressed = await gzipped(raw, { level: 9 });
  const digest = createHash('sha256').update(raw).digest('base64url').slice(0, 27);
  return {
    type: asset.type,
    raw,
    gzip: compressed.length < raw.length ? compressed : undefined,
    etag: `"${digest}"`,
    gzipEtag: `"${digest}-gzip"`,
  };
}

/** Assets by name, each prepared. */
export async function prepareAssets(assets: Record<string, StaticAsset>): Promise<Map<string, PreparedAsset>> {
  return new Map(await Promise.all(Object.entries(assets).map(async ([name, asset]) => [name, await prepareAsset(asset)] as const)));
}

/** Whether Accept-Encoding takes gzip: named, or by `*`, with a weight above 0. */
export function takesGzip(acceptEncoding: string | null): boolean {
  if (!acceptEncoding) return false;
  let gzipWeight: number | undefined;
  let anyWeight: number | undefined;
  for (const part of acceptEncoding.split(',')) {
    const [coding = '', ...parameters] = part.split(';').map((piece) => piece.trim().toLowerCase());
    const q = parameters.find((parameter) => parameter.startsWith('q='));
    const weight = q === undefined ? 1 : Number(q.slice(2));
    if (coding === 'gzip' || coding === 'x-gzip') gzipWeight = weight;
    else if (coding === '*') anyWeight = weight;
  }
  return (gzipWeight ?? anyWeight ?? 0) > 0;
}

/** Whether If-None-Match names the asset's tag (weakly compared, as RFC 9110 §13.1.2 has it), or is `*`. */
function unchanged(ifNoneMatch: string | null, etag: string): boolean {
  if (ifNoneMatch === null) return false;
  return ifNoneMatch
    .split(',')
    .map((tag) => tag.trim().replace(/^W\//, ''))
    .some((tag) => tag === '*' || tag === etag);
}

/** The answer to a GET or HEAD of an asset. */
export function assetResponse(request: Request, asset: PreparedAsset, ResponseClass: typeof Response): Response {
  const compressed = asset.gzip !== undefined && takesGzip(request.headers.get('accept-encoding'));
  const etag = compressed ? asset.gzipEtag : asset.etag;
  const headers: Record<string, string> = {
    etag,
    // Stored, and revalidated on each use: a 304 costs a round trip, a stale bundle a broken page.
    'cache-control': 'public, no-cache',
    vary: 'Accept-Encoding',
  };
  if (unchanged(request.headers.get('if-none-match'), etag)) return new ResponseClass(null, { status: 304, headers });
  const body = compressed ? asset.gzip! : asset.raw;
  return new ResponseClass(request.method === 'HEAD' ? null : body, {
    headers: {
      ...headers,
      'content-type': asset.type,
      'content-length': String(body.length),
      ...(compressed ? { 'content-encoding': 'gzip' } : {}),
    },
  });
}
