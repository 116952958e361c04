import { build } from 'esbuild';
const r = await build({ entryPoints: { 'subagent-otel': 'src/cli/main.ts' }, outdir: '/tmp/mt', chunkNames: 'chunks/[name]-[hash]', bundle: true, splitting: true, format: 'esm', platform: 'node', target: 'node20', mainFields: ['module','main'], metafile: true, write: false, logLevel: 'error' });
for (const [f, o] of Object.entries(r.metafile.outputs)) {
  if (o.bytes < 20000) continue;
  const pk = new Map();
  for (const [i, v] of Object.entries(o.inputs)) { const m = /node_modules\/((?:@[^/]+\/)?[^/]+)(?:\/node_modules\/((?:@[^/]+\/)?[^/]+))?/.exec(i); const k = m ? (m[2] ? m[1]+'>'+m[2] : m[1]) : i.split('/').slice(0,3).join('/'); pk.set(k, (pk.get(k) ?? 0) + v.bytesInOutput); }
  console.log(f.replace('../../../tmp/mt/',''), o.bytes, 'imports:', o.imports.map(i=>i.path.replace(/.*\//,'')+(i.kind==='dynamic-import'?'(dyn)':'')).join(' ')); for (const [k, v] of [...pk].sort((a,b)=>b[1]-a[1]).slice(0,12)) console.log('  ', String(v).padStart(8), k);
}
