import { build } from 'esbuild';
const stubs = (process.env.STUB ?? '').split(',').filter(Boolean);
const r = await build({ entryPoints: { 'subagent-otel': 'src/cli/main.ts' }, outdir: process.env.OUT, chunkNames: 'chunks/[name]-[hash]', bundle: true, splitting: true, format: 'esm', platform: 'node', target: 'node20', mainFields: ['module','main'], logLevel: 'error', metafile: true,
  banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
  plugins: [{ name: 'stub', setup(b) { b.onResolve({ filter: /.*/ }, (a) => stubs.some(s => a.path === s || a.path.endsWith(s)) ? { path: a.path, namespace: 'stub' } : undefined); b.onLoad({ filter: /.*/, namespace: 'stub' }, () => ({ contents: 'export class PrometheusExporter {}; export class OTLPTraceExporter {}; export class OTLPMetricExporter {}; export const AggregationTemporalityPreference={}; export class CumulativeTemporalitySelector{}; export class DeltaTemporalitySelector{}; export class LowMemoryTemporalitySelector{}; export class AcpTracker {}', loader: 'js' })); } }] });
for (const [f,o] of Object.entries(r.metafile.outputs)) if (o.bytes > 200000) console.error(f, o.bytes);
