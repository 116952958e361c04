/**
 * The public API is deliberate: exactly these runtime names, named exports
 * only, and no schema-library (zod) type in any public declaration.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { ROOT } from './helpers/paths.js';

const RUNTIME_NAMES = [
  'ACP_TRUNCATION_SIGNATURES',
  'ACP_TRUNCATION_TABLE_VERSION',
  'ACP_USAGE_SCOPES',
  'ACP_USAGE_SCOPE_TABLE_VERSION',
  'AcpTracker',
  'AssistantOutputFold',
  'FrameTap',
  'LogTracker',
  'RunTelemetry',
  'SdkTracker',
  'createTelemetry',
  'epochStopReason',
  'finalAssistantOutput',
  'foregroundToolResult',
  'inProcessStopReason',
  'matchTruncation',
  'outcomeOf',
  'parseFrame',
  'parseSdkNotification',
  'parseSessionEvent',
  'readDurableLog',
  'readDurableLogFile',
  'readResult',
  'reportedOutputMatches',
  'resolveContentPolicy',
  'runAcpSubagent',
  'runSdkSubagent',
  'sdkStopReason',
  'semconv',
  'splitEpochs',
  'stopReasonFromAcp',
  'stopReasonOfEvents',
  'subagentResult',
  'subagentRunEndInfo',
];

describe('the public API', () => {
  it('exports exactly the chosen runtime names', async () => {
    const api = (await import('../dist/index.js')) as Record<string, unknown>;
    expect(Object.keys(api).sort()).toEqual(RUNTIME_NAMES);
    expect(typeof (api['semconv'] as Record<string, unknown>)['ATTR_SUBAGENT_STOP_REASON']).toBe('string');
    expect(typeof api['LogTracker']).toBe('function');
  });

  it('uses named exports only (the telemetry names as one namespace; the types named once, in types.ts)', () => {
    const source = readFileSync(join(ROOT, 'src', 'index.ts'), 'utf8');
    const stars = source.split('\n').filter((line) => /^export\s+(type\s+)?\*/.test(line));
    expect(stars).toEqual(["export * as semconv from './telemetry/semconv.js';", "export type * from './types.js';"]);
    const types = readFileSync(join(ROOT, 'src', 'types.ts'), 'utf8');
    expect(types.split('\n').filter((line) => /^export\s+(type\s+)?\*/.test(line))).toEqual([]);
    expect(
      types
        .split('\n')
        .filter((line) => /^export\s/.test(line))
        .every((line) => line.startsWith('export type {')),
    ).toBe(true);
  });

  it('has no zod type in any public declaration, and every public type comes from types.ts', () => {
    const index = join(ROOT, 'dist', 'index.d.ts');
    const program = ts.createProgram([index], {
      strict: true,
      skipLibCheck: true,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
    });
    const checker = program.getTypeChecker();
    const file = program.getSourceFile(index);
    const moduleSymbol = file === undefined ? undefined : checker.getSymbolAtLocation(file);
    expect(moduleSymbol).toBeDefined();
    const exported = checker.getExportsOfModule(moduleSymbol!);
    const offending: string[] = [];
    let types = 0;
    for (const symbol of exported) {
      if (symbol.name === 'semconv') continue;
      const target = (symbol.flags & ts.SymbolFlags.Alias) !== 0 ? checker.getAliasedSymbol(symbol) : symbol;
      if ((target.flags & (ts.SymbolFlags.Interface | ts.SymbolFlags.TypeAlias)) !== 0) types += 1;
      for (const declaration of target.declarations ?? []) {
        if (/\bzod\b|\bz\.|Zod/.test(declaration.getText())) offending.push(symbol.name);
      }
    }
    expect(offending).toEqual([]);
    expect(types).toBe(72);
    const typesModule = readFileSync(join(ROOT, 'src', 'types.ts'), 'utf8');
    expect(typesModule).not.toMatch(/from 'zod'/);
  });
});
