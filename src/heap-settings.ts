// V8 settings the service runs with wherever it is started (the image, `npm start`, a benchmark),
// set before the rest of it loads. NODE_OPTIONS cannot carry them: Node accepts only a few V8 flags
// there.
//
// Allocation-site pretenuring off. V8 watches how much of what each allocation site makes survives a
// young-generation collection and, past 85%, allocates that site's objects straight in the old
// generation from then on. Under load a request's objects are often caught alive by a collection,
// so whether a hot site gets that verdict was a matter of timing: in narrowed runs of the nested
// query, 5 of 8 processes of the same code grew the old generation by about 0.95 MB per young
// collection (full collections every 2–3 s, each a stall of about 100 ms for every request in flight)
// and 3 by about 0.32 MB; with pretenuring off, 6 of 6 by 0.31–0.33 MB. What those sites make dies
// with its request, so the young generation is where it belongs.
import v8 from 'node:v8';

v8.setFlagsFromString('--no-allocation-site-pretenuring');
