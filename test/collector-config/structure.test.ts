/**
 * Structure of the collector-config deployment, checked without Docker (this
 * machine has no engine) by parsing the files: every collector component a
 * pipeline uses is defined (and every defined one is used), processors are in
 * a safe order, the collector configs tie their attribute names to
 * `src/telemetry/semconv.ts`, and every port and endpoint in the collector
 * configs, docker-compose.yml, prometheus.yml, the Grafana provisioning and
 * the README agrees with `collector-config/endpoints.json`.
 *
 * @module subagent-otel/test/collector-config/structure
 */

import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { PRODUCTION_SETTINGS } from '../../collector-config/prometheus/render-rules.mjs';
import {
  ATTR_GEN_AI_AGENT_NAME,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_PROVIDER_NAME,
  ATTR_SUBAGENT_OUTPUT_SOURCE,
  ATTR_SUBAGENT_STOP_REASON,
  GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT,
  METRIC_GEN_AI_EXECUTE_TOOL_DURATION,
  METRIC_GEN_AI_CLIENT_OPERATION_DURATION,
  METRIC_GEN_AI_INVOKE_AGENT_DURATION,
  DEFAULT_SERVICE_NAME,
  STOP_REASON_VALUE_COMPLETED,
} from '../../src/telemetry/semconv.js';
import { METRICS_FILE_NAME, TRACES_FILE_NAME } from '../../src/telemetry/otlp-json-file-exporter.js';
import {
  DEFAULT_PROMETHEUS_HOST,
  DEFAULT_PROMETHEUS_PORT,
  ENV_PROMETHEUS_PORT,
  PROMETHEUS_PATH,
} from '../../src/telemetry/prometheus-endpoint.js';
import { ENV_PROMETHEUS_HOST } from '../../src/cli/telemetry-options.js';
import { DEFAULT_OUT_DIR, ENV_OUT_DIR } from '../../src/telemetry/setup.js';

const configDir = fileURLToPath(new URL('../../collector-config/', import.meta.url));
const read = (rel: string): string => readFileSync(join(configDir, rel), 'utf8');

type Doc = Record<string, unknown>;

function rec(value: unknown, what: string): Doc {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error(`${what} is not a mapping`);
  return value as Doc;
}

function arr(value: unknown, what: string): unknown[] {
  if (!Array.isArray(value)) throw new Error(`${what} is not a list`);
  return value;
}

function strs(value: unknown, what: string): string[] {
  return arr(value, what).map((v, i) => {
    if (typeof v !== 'string') throw new Error(`${what}[${i}] is not a string`);
    return v;
  });
}

/** Follows a dotted path of mapping keys; throws naming the first missing step. */
function at(doc: unknown, path: string): unknown {
  let cur: unknown = doc;
  for (const key of path.split('.')) cur = rec(cur, path)[key];
  return cur;
}

const yamlFile = (rel: string): Doc => rec(parse(read(rel)), rel);

interface Endpoints {
  observer: {
    otlpEndpoint: string;
    otlpProtocol: string;
    prometheusPortOption: string;
    prometheusPortEnv: string;
    prometheusPort: number;
    prometheusHostOption: string;
    prometheusHostEnv: string;
    prometheusHostDefault: string;
    prometheusPath: string;
    outDirEnv: string;
    outDirDefault: string;
    traceFile: string;
    metricFile: string;
  };
  collector: {
    otlpGrpcPort: number;
    otlpHttpPort: number;
    prometheusExporterPort: number;
    healthCheckPort: number;
    telemetryPort: number;
    outDirMount: string;
    outDirHostDefault: string;
  };
  gateway: { services: string[]; otlpGrpcPort: number };
  jaeger: { service: string; uiPort: number; otlpGrpcPort: number };
  prometheus: { service: string; port: number };
  alertmanager: { service: string; port: number };
  grafana: { service: string; port: number };
}
const ep = JSON.parse(read('endpoints.json')) as Endpoints;

/** `${env:NAME:-value}`: an address scripts/stack.mjs sets through NAME, whose default is the compose value. */
const env = (name: string, value: string | number): string => `\${env:${name}:-${value}}`;

const COLLECTOR_CONFIGS = ['otelcol.yaml', 'otelcol.agent.yaml', 'otelcol.gateway.yaml'] as const;

/** Component types of the contrib distribution that these configs may use. */
const KNOWN_TYPES = {
  receivers: ['otlp', 'otlp_json_file'],
  processors: ['memory_limiter', 'batch', 'transform', 'tail_sampling', 'delta_to_cumulative'],
  exporters: ['otlp_grpc', 'prometheus', 'load_balancing'],
  connectors: ['count'],
  extensions: ['health_check', 'file_storage'],
} as const;

interface Pipeline {
  name: string;
  receivers: string[];
  processors: string[];
  exporters: string[];
}

function pipelines(cfg: Doc, file: string): Pipeline[] {
  return Object.entries(rec(at(cfg, 'service.pipelines'), `${file} service.pipelines`)).map(([name, p]) => {
    const def = rec(p, `${file} pipeline ${name}`);
    return {
      name,
      receivers: strs(def.receivers, `${file} ${name}.receivers`),
      processors: strs(def.processors ?? [], `${file} ${name}.processors`),
      exporters: strs(def.exporters, `${file} ${name}.exporters`),
    };
  });
}

const defined = (cfg: Doc, section: string): string[] => Object.keys(rec(cfg[section] ?? {}, section));

describe('endpoints.json', () => {
  it('holds the observer settings its code uses', () => {
    expect(ep.observer.prometheusPort).toBe(DEFAULT_PROMETHEUS_PORT);
    expect(ep.observer.prometheusPath).toBe(PROMETHEUS_PATH);
    expect(ep.observer.prometheusPortEnv).toBe(ENV_PROMETHEUS_PORT);
    expect(ep.observer.prometheusHostEnv).toBe(ENV_PROMETHEUS_HOST);
    expect(ep.observer.prometheusHostDefault).toBe(DEFAULT_PROMETHEUS_HOST);
    expect(ep.observer.outDirEnv).toBe(ENV_OUT_DIR);
    expect(ep.observer.outDirDefault).toBe(DEFAULT_OUT_DIR);
    expect([ep.observer.traceFile, ep.observer.metricFile]).toEqual([TRACES_FILE_NAME, METRICS_FILE_NAME]);
  });

  it('holds the documented observer defaults', () => {
    expect(ep.observer).toMatchObject({
      otlpEndpoint: 'http://localhost:4318',
      otlpProtocol: 'http/json',
      prometheusPortOption: '--prometheus-port',
      prometheusPort: 9464,
      prometheusHostOption: '--prometheus-host',
      prometheusHostEnv: 'SUBAGENT_OTEL_PROMETHEUS_HOST',
      prometheusHostDefault: '127.0.0.1',
      prometheusPath: '/metrics',
    });
  });
});

describe.each(COLLECTOR_CONFIGS)('%s', (file) => {
  const cfg = yamlFile(file);
  const pipes = pipelines(cfg, file);

  it('defines every receiver, processor, exporter and connector its pipelines use', () => {
    const missing: string[] = [];
    const connectors = defined(cfg, 'connectors');
    for (const p of pipes) {
      for (const r of p.receivers)
        if (!defined(cfg, 'receivers').includes(r) && !connectors.includes(r)) missing.push(`${p.name}: receiver ${r}`);
      for (const r of p.processors)
        if (!defined(cfg, 'processors').includes(r)) missing.push(`${p.name}: processor ${r}`);
      for (const r of p.exporters)
        if (!defined(cfg, 'exporters').includes(r) && !connectors.includes(r)) missing.push(`${p.name}: exporter ${r}`);
    }
    for (const x of strs(at(cfg, 'service.extensions'), 'service.extensions')) {
      if (!defined(cfg, 'extensions').includes(x)) missing.push(`extension ${x}`);
    }
    expect(missing).toEqual([]);
  });

  it('uses every component it defines, and each connector on both ends', () => {
    const used = {
      receivers: pipes.flatMap((p) => p.receivers),
      processors: pipes.flatMap((p) => p.processors),
      exporters: pipes.flatMap((p) => p.exporters),
    };
    const unused: string[] = [];
    for (const section of ['receivers', 'processors', 'exporters'] as const) {
      for (const id of defined(cfg, section)) if (!used[section].includes(id)) unused.push(`${section}.${id}`);
    }
    for (const id of defined(cfg, 'connectors')) {
      if (!used.exporters.includes(id) || !used.receivers.includes(id)) unused.push(`connectors.${id}`);
    }
    for (const id of defined(cfg, 'extensions')) {
      if (!strs(at(cfg, 'service.extensions'), 'service.extensions').includes(id)) unused.push(`extensions.${id}`);
    }
    expect(unused).toEqual([]);
  });

  it('uses only current component type names of the 0.161.0 release (no deprecated alias)', () => {
    const unknown: string[] = [];
    for (const [section, types] of Object.entries(KNOWN_TYPES)) {
      for (const id of defined(cfg, section)) {
        const type = id.split('/')[0] ?? '';
        if (!(types as readonly string[]).includes(type)) unknown.push(`${section}.${id}`);
      }
    }
    expect(unknown).toEqual([]);
  });

  // The agent has no batch: what it accepts goes straight to its disk queue (decision 0102), and a
  // request held in a batch would be lost with the process; its own test below pins that.
  const lastProcessor = file === 'otelcol.agent.yaml' ? 'memory_limiter' : 'batch';
  it(`starts every pipeline with memory_limiter and ends it with ${lastProcessor}`, () => {
    for (const p of pipes) {
      expect({ pipeline: p.name, first: p.processors[0], last: p.processors.at(-1) }).toEqual({
        pipeline: p.name,
        first: 'memory_limiter',
        last: lastProcessor,
      });
    }
  });

  it('serves the health check and its own metrics on the documented ports', () => {
    expect(at(cfg, 'extensions.health_check.endpoint')).toBe(
      env('STACK_HEALTH_CHECK_ENDPOINT', `0.0.0.0:${ep.collector.healthCheckPort}`),
    );
    const reader = rec(arr(at(cfg, 'service.telemetry.metrics.readers'), 'readers')[0], 'reader');
    expect(at(reader, 'pull.exporter.prometheus')).toEqual({
      host: env('STACK_TELEMETRY_HOST', '0.0.0.0'),
      port: env('STACK_TELEMETRY_PORT', ep.collector.telemetryPort),
    });
  });
});

describe('the single-tier collector (otelcol.yaml)', () => {
  const cfg = yamlFile('otelcol.yaml');
  const pipes = pipelines(cfg, 'otelcol.yaml');
  const pipe = (name: string): Pipeline => {
    const p = pipes.find((x) => x.name === name);
    if (p === undefined) throw new Error(`no pipeline ${name}`);
    return p;
  };

  it('takes OTLP over gRPC and HTTP on the documented ports, on all interfaces of the container', () => {
    expect(at(cfg, 'receivers.otlp.protocols.grpc.endpoint')).toBe(
      env('STACK_OTLP_GRPC_ENDPOINT', `0.0.0.0:${ep.collector.otlpGrpcPort}`),
    );
    expect(at(cfg, 'receivers.otlp.protocols.http.endpoint')).toBe(
      env('STACK_OTLP_HTTP_ENDPOINT', `0.0.0.0:${ep.collector.otlpHttpPort}`),
    );
    expect(pipe('traces').receivers).toContain('otlp');
    expect(pipe('metrics').receivers).toContain('otlp');
  });

  it('sends traces to Jaeger over OTLP and metrics to the prometheus exporter', () => {
    expect(pipe('traces').exporters).toContain('otlp_grpc/jaeger');
    expect(at(cfg, 'exporters.otlp_grpc/jaeger.endpoint')).toBe(
      env('STACK_JAEGER_OTLP_ENDPOINT', `${ep.jaeger.service}:${ep.jaeger.otlpGrpcPort}`),
    );
    expect(read('jaeger.yaml')).toContain(env('JAEGER_OTLP_GRPC_ENDPOINT', `0.0.0.0:${ep.jaeger.otlpGrpcPort}`));
    expect(pipe('metrics').exporters).toEqual(['prometheus']);
    expect(at(cfg, 'exporters.prometheus.endpoint')).toBe(
      env('STACK_PROMETHEUS_EXPORTER_ENDPOINT', `0.0.0.0:${ep.collector.prometheusExporterPort}`),
    );
  });

  it("keeps today's names (underscores, the _total suffix) and never turns resource attributes into labels", () => {
    expect(at(cfg, 'exporters.prometheus.translation_strategy')).toBe('UnderscoreEscapingWithSuffixes');
    expect(at(cfg, 'exporters.prometheus.resource_constant_labels.enabled')).toBe(false);
  });

  it('clears the unit of exactly the duration histograms, so no _seconds suffix is added', () => {
    const statements = arr(
      at(cfg, 'processors.transform/prometheus_names.metric_statements'),
      'metric_statements',
    ).flatMap((s) => strs(rec(s, 'statement group').statements, 'statements'));
    expect(statements).toEqual([
      `set(unit, "") where name == "${METRIC_GEN_AI_INVOKE_AGENT_DURATION}"`,
      `set(unit, "") where name == "${METRIC_GEN_AI_EXECUTE_TOOL_DURATION}"`,
      `set(unit, "") where name == "${METRIC_GEN_AI_CLIENT_OPERATION_DURATION}"`,
    ]);
    expect(pipe('metrics').processors).toContain('transform/prometheus_names');
  });

  it("gets the observer's OTLP-JSON files from the overlay, which re-lists the receivers of both pipelines in full", () => {
    const files = yamlFile('otelcol.files.yaml');
    expect(at(files, 'receivers.otlp_json_file/traces.include')).toEqual([
      `${ep.collector.outDirMount}/${ep.observer.traceFile}`,
    ]);
    expect(at(files, 'receivers.otlp_json_file/metrics.include')).toEqual([
      `${ep.collector.outDirMount}/${ep.observer.metricFile}`,
    ]);
    expect(at(files, 'receivers.otlp_json_file/traces.start_at')).toBe('beginning');
    expect(at(files, 'receivers.otlp_json_file/metrics.start_at')).toBe('beginning');
    expect(at(files, 'service.pipelines.traces.receivers')).toEqual(['otlp', 'otlp_json_file/traces']);
    expect(at(files, 'service.pipelines.metrics.receivers')).toEqual(['otlp', 'otlp_json_file/metrics', 'count/runs']);
    expect(pipe('traces').receivers).toEqual(['otlp']);
    expect(pipe('metrics').receivers).toEqual(['otlp', 'count/runs']);
    expect(Object.keys(files).sort()).toEqual(['receivers', 'service']);
    expect(Object.keys(rec(files.service, 'service'))).toEqual(['pipelines']);
  });

  it("counts invoke_agent spans into run counts by the run counter's attributes", () => {
    const def = rec(at(cfg, 'connectors.count/runs.spans'), 'count/runs.spans');
    const metric = rec(def['subagent.runs.from_spans'], 'subagent.runs.from_spans');
    expect(metric.conditions).toEqual([
      `attributes["${ATTR_GEN_AI_OPERATION_NAME}"] == "${GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT}"`,
    ]);
    expect(arr(metric.attributes, 'attributes')).toEqual(
      [ATTR_SUBAGENT_STOP_REASON, ATTR_GEN_AI_AGENT_NAME, ATTR_GEN_AI_PROVIDER_NAME, ATTR_SUBAGENT_OUTPUT_SOURCE].map(
        (key) => ({
          key,
          default_value: 'unknown',
        }),
      ),
    );
    expect(pipe('traces').exporters).toContain('count/runs');
    expect(pipe('metrics').receivers).toContain('count/runs');
  });
});

describe('the two-tier collectors (otelcol.agent.yaml, otelcol.gateway.yaml)', () => {
  const single = yamlFile('otelcol.yaml');
  const agent = yamlFile('otelcol.agent.yaml');
  const gateway = yamlFile('otelcol.gateway.yaml');

  it('the agent takes OTLP on the same ports as the single-tier collector, so the observer settings stay', () => {
    expect(at(agent, 'receivers')).toEqual(at(single, 'receivers'));
    const agentPipes = pipelines(agent, 'agent');
    expect(agentPipes.map((p) => [p.name, p.receivers])).toEqual(
      pipelines(single, 'single').map((p) => [p.name, p.receivers]),
    );
  });

  it('the agent counts runs from spans before sampling, exactly as the single-tier collector does', () => {
    expect(at(agent, 'connectors')).toEqual(at(single, 'connectors'));
    expect(pipelines(agent, 'agent').find((p) => p.name === 'traces')?.exporters).toContain('count/runs');
  });

  it('the agent load-balances traces by trace id and metrics by service over the two listed gateways', () => {
    expect(at(agent, 'exporters.load_balancing/traces.routing_key')).toBe('traceID');
    expect(at(agent, 'exporters.load_balancing/metrics.routing_key')).toBe('service');
    for (const id of ['load_balancing/traces', 'load_balancing/metrics']) {
      // Strings: the resolver's fields are strings, and the strict decoder refuses a number.
      expect(at(agent, `exporters.${id}.resolver.static.hostnames`)).toEqual(
        ep.gateway.services.map((s, i) => env(`STACK_GATEWAY_${i + 1}_ENDPOINT`, `${s}:${ep.gateway.otlpGrpcPort}`)),
      );
      expect(rec(at(agent, `exporters.${id}.resolver`), 'resolver').dns).toBeUndefined();
    }
    const pipes = pipelines(agent, 'agent');
    expect(pipes.find((p) => p.name === 'traces')?.exporters).toContain('load_balancing/traces');
    expect(pipes.find((p) => p.name === 'metrics')?.exporters).toEqual(['load_balancing/metrics']);
  });

  it('the agent queues on disk, and only on disk: no in-memory queue, retry or batch in front of it', () => {
    expect(at(agent, 'extensions.file_storage/queue.directory')).toBe(
      env('STACK_AGENT_QUEUE_DIR', '/var/lib/otelcol/agent-queue'),
    );
    expect(at(agent, 'service.extensions')).toContain('file_storage/queue');
    for (const id of ['load_balancing/traces', 'load_balancing/metrics']) {
      expect({ id, queue: at(agent, `exporters.${id}.sending_queue`) }).toEqual({
        id,
        queue: { enabled: true, storage: 'file_storage/queue', queue_size: 10000 },
      });
      expect({ id, retry: at(agent, `exporters.${id}.retry_on_failure`) }).toEqual({
        id,
        retry: { enabled: true, max_elapsed_time: '0s' },
      });
      // A per-gateway in-memory queue took requests off the disk queue at once, and an agent restart
      // lost them; a per-gateway send that gave up made the disk queue's retry send the whole request
      // again, to the healthy gateway too (decision 0102). Each per-gateway send blocks until delivered.
      expect({
        id,
        sub: {
          queue: at(agent, `exporters.${id}.protocol.otlp.sending_queue.enabled`),
          retry: at(agent, `exporters.${id}.protocol.otlp.retry_on_failure`),
        },
      }).toEqual({ id, sub: { queue: false, retry: { enabled: true, max_elapsed_time: '0s' } } });
    }
    for (const p of pipelines(agent, 'agent'))
      expect({ pipeline: p.name, processors: p.processors }).toEqual({
        pipeline: p.name,
        processors: ['memory_limiter'],
      });
  });

  it('the gateway listens where the agent sends and tail-samples before exporting to Jaeger', () => {
    expect(at(gateway, 'receivers.otlp.protocols.grpc.endpoint')).toBe(
      env('STACK_OTLP_GRPC_ENDPOINT', `0.0.0.0:${ep.gateway.otlpGrpcPort}`),
    );
    expect(pipelines(gateway, 'gateway').find((p) => p.name === 'traces')).toEqual({
      name: 'traces',
      receivers: ['otlp'],
      processors: ['memory_limiter', 'tail_sampling', 'batch'],
      exporters: ['otlp_grpc/jaeger'],
    });
    expect(at(gateway, 'exporters.otlp_grpc/jaeger')).toEqual(at(single, 'exporters.otlp_grpc/jaeger'));
  });

  it('the gateway keeps every trace with a non-completed run and samples the rest at a configurable rate', () => {
    const policies = arr(at(gateway, 'processors.tail_sampling.policies'), 'policies').map((p) => rec(p, 'policy'));
    expect(policies.map((p) => p.type)).toEqual(['ottl_condition', 'probabilistic']);
    expect(at(policies[0], 'ottl_condition.span')).toEqual([
      `attributes["${ATTR_SUBAGENT_STOP_REASON}"] != nil and attributes["${ATTR_SUBAGENT_STOP_REASON}"] != "${STOP_REASON_VALUE_COMPLETED}"`,
    ]);
    expect(at(policies[1], 'probabilistic.sampling_percentage')).toBe('${env:COMPLETED_TRACE_SAMPLING_PERCENTAGE:-10}');
  });

  it('the gateway exposes metrics exactly as the single-tier collector does', () => {
    expect(at(gateway, 'exporters.prometheus')).toEqual(at(single, 'exporters.prometheus'));
    expect(at(gateway, 'processors.transform/prometheus_names')).toEqual(
      at(single, 'processors.transform/prometheus_names'),
    );
  });
});

describe('docker-compose.yml', () => {
  const compose = yamlFile('docker-compose.yml');
  const services = rec(compose.services, 'services');
  const svc = (name: string): Doc => rec(services[name], `service ${name}`);
  const ports = (name: string): string[] => strs(svc(name).ports ?? [], `${name}.ports`);
  const volumes = (name: string): string[] => strs(svc(name).volumes ?? [], `${name}.volumes`);

  it('starts the collector tiers, Jaeger, Prometheus, Alertmanager and Grafana', () => {
    expect(Object.keys(services).sort()).toEqual([
      'alertmanager',
      'grafana',
      'jaeger',
      'otel-agent',
      'otel-collector',
      'otel-gateway-1',
      'otel-gateway-2',
      'prometheus',
    ]);
  });

  it('pins every image to a version tag', () => {
    const images = Object.keys(services).map((name) => String(svc(name).image));
    for (const image of images) expect(image).toMatch(/^[a-z0-9][a-z0-9./-]*:v?\d+\.\d+\.\d+$/);
    const collectors = ['otel-collector', 'otel-agent', ...ep.gateway.services].map((n) => svc(n).image);
    expect(new Set(collectors).size).toBe(1);
    expect(String(collectors[0])).toMatch(/^otel\/opentelemetry-collector-contrib:/);
  });

  it('runs the single-tier collector by default and the agent with two gateways under the two-tier profile', () => {
    expect(svc('otel-collector').profiles).toEqual(['single-tier']);
    expect(svc('otel-agent').profiles).toEqual(['two-tier']);
    for (const gw of ep.gateway.services) expect(svc(gw).profiles).toEqual(['two-tier']);
    expect(ep.gateway.services).toHaveLength(2);
    expect(read('.env')).toMatch(/^COMPOSE_PROFILES=single-tier$/m);
    for (const name of ['jaeger', 'prometheus', 'alertmanager', 'grafana']) expect(svc(name).profiles).toBeUndefined();
  });

  it('publishes the observer-facing OTLP ports from whichever collector tier runs', () => {
    const otlp = [
      `${ep.collector.otlpGrpcPort}:${ep.collector.otlpGrpcPort}`,
      `${ep.collector.otlpHttpPort}:${ep.collector.otlpHttpPort}`,
    ];
    expect(ports('otel-collector')).toEqual(otlp);
    expect(ports('otel-agent')).toEqual(otlp);
    for (const gw of ep.gateway.services) expect(svc(gw).ports).toBeUndefined();
    expect(new URL(ep.observer.otlpEndpoint).port).toBe(String(ep.collector.otlpHttpPort));
    expect(new URL(ep.observer.otlpEndpoint).hostname).toBe('localhost');
    expect(ep.observer.otlpProtocol).toBe('http/json');
  });

  it('publishes the UIs on the documented ports', () => {
    expect(ports(ep.jaeger.service)).toEqual([`${ep.jaeger.uiPort}:${ep.jaeger.uiPort}`]);
    expect(ports(ep.prometheus.service)).toEqual([`${ep.prometheus.port}:${ep.prometheus.port}`]);
    expect(ports(ep.alertmanager.service)).toEqual([`${ep.alertmanager.port}:${ep.alertmanager.port}`]);
    expect(ports(ep.grafana.service)).toEqual([`${ep.grafana.port}:${ep.grafana.port}`]);
  });

  it('mounts each collector its own config file, the one its command loads', () => {
    const expected: Record<string, string> = {
      'otel-collector': 'otelcol.yaml',
      'otel-agent': 'otelcol.agent.yaml',
      'otel-gateway-1': 'otelcol.gateway.yaml',
      'otel-gateway-2': 'otelcol.gateway.yaml',
    };
    const overlay = 'otelcol.files.yaml';
    for (const [name, file] of Object.entries(expected)) {
      expect(volumes(name)).toContain(`./${file}:/etc/otelcol-contrib/${file}:ro`);
      // The tiers that take the observer's files load the overlay after their own file.
      const withFiles = name === 'otel-collector' || name === 'otel-agent';
      expect(svc(name).command).toEqual([
        `--config=/etc/otelcol-contrib/${file}`,
        ...(withFiles ? [`--config=/etc/otelcol-contrib/${overlay}`] : []),
      ]);
      if (withFiles) expect(volumes(name)).toContain(`./${overlay}:/etc/otelcol-contrib/${overlay}:ro`);
    }
    expect(svc('jaeger').command).toEqual(['--config=/etc/jaeger/jaeger.yaml']);
    expect(volumes('jaeger')).toEqual(['./jaeger.yaml:/etc/jaeger/jaeger.yaml:ro']);
  });

  it("mounts the observer's output folder where the otlp_json_file receivers read", () => {
    // Compose resolves the host path against collector-config/: the default is the folder the demo writes from the repository root.
    const mount = `\${${ep.observer.outDirEnv}:-${ep.collector.outDirHostDefault}}:${ep.collector.outDirMount}:ro`;
    expect(volumes('otel-collector')).toContain(mount);
    expect(volumes('otel-agent')).toContain(mount);
  });

  it('bind-mounts only files and folders that exist in collector-config', () => {
    const missing: string[] = [];
    for (const name of Object.keys(services)) {
      for (const v of volumes(name)) {
        const source = v.split(':')[0] ?? '';
        if (source.startsWith('./') && !existsSync(join(configDir, source))) missing.push(`${name}: ${source}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('passes the gateway its sampling rate and lets Prometheus reach the observer on the host', () => {
    for (const gw of ep.gateway.services) {
      expect(at(svc(gw), 'environment.COMPLETED_TRACE_SAMPLING_PERCENTAGE')).toBe(
        '${COMPLETED_TRACE_SAMPLING_PERCENTAGE:-10}',
      );
    }
    expect(read('otelcol.gateway.yaml')).toContain('${env:COMPLETED_TRACE_SAMPLING_PERCENTAGE:-10}');
    expect(svc('prometheus').extra_hosts).toEqual(['host.docker.internal:host-gateway']);
  });

  it('runs Alertmanager without cluster gossip', () => {
    expect(svc('alertmanager').command).toContain('--cluster.listen-address=');
    expect(volumes('alertmanager')).toContain('./alertmanager/alertmanager.yml:/etc/alertmanager/alertmanager.yml:ro');
  });
});

describe('prometheus/prometheus.yml', () => {
  const prom = yamlFile('prometheus/prometheus.yml');
  const jobs = arr(prom.scrape_configs, 'scrape_configs').map((j) => rec(j, 'scrape config'));
  const job = (name: string): Doc => {
    const j = jobs.find((x) => x.job_name === name);
    if (j === undefined) throw new Error(`no scrape job ${name}`);
    return j;
  };

  it('loads the rendered rules and sends alerts to the compose Alertmanager', () => {
    expect(prom.rule_files).toEqual(['rules.yml']);
    const am = rec(arr(at(prom, 'alerting.alertmanagers'), 'alertmanagers')[0], 'alertmanager');
    expect(at(rec(arr(am.static_configs, 'static_configs')[0], 'static config'), 'targets')).toEqual([
      `${ep.alertmanager.service}:${ep.alertmanager.port}`,
    ]);
  });

  it('scrapes the collector and every gateway on the exporter port, keeping their job and instance labels', () => {
    for (const [name, hosts] of [
      ['otel-collector', ['otel-collector']],
      ['otel-gateway', ep.gateway.services],
    ] as const) {
      expect(job(name).honor_labels).toBe(true);
      const sd = rec(arr(job(name).dns_sd_configs, 'dns_sd_configs')[0], 'dns_sd');
      expect({ names: sd.names, port: sd.port, type: sd.type }).toEqual({
        names: hosts,
        port: ep.collector.prometheusExporterPort,
        type: 'A',
      });
      // scripts/stack.mjs writes this file beside its copy of prometheus.yml.
      expect(job(name).file_sd_configs).toEqual([{ files: [`targets/${name}.json`] }]);
    }
  });

  it("scrapes every collector's own metrics, where lost data shows", () => {
    const sd = rec(arr(job('otelcol-telemetry').dns_sd_configs, 'dns_sd_configs')[0], 'dns_sd');
    expect(sd.names).toEqual(['otel-collector', 'otel-agent', ...ep.gateway.services]);
    expect(sd.port).toBe(ep.collector.telemetryPort);
    expect(job('otelcol-telemetry').file_sd_configs).toEqual([{ files: ['targets/otelcol-telemetry.json'] }]);
  });

  it("can scrape the observer's own endpoint on the Docker host at the documented port and path", () => {
    const direct = job('subagent-otel');
    expect(direct.metrics_path).toBe(ep.observer.prometheusPath);
    expect(at(rec(arr(direct.static_configs, 'static_configs')[0], 'static config'), 'targets')).toEqual([
      `host.docker.internal:${ep.observer.prometheusPort}`,
    ]);
  });
});

describe('Grafana provisioning', () => {
  const sources = arr(yamlFile('grafana/provisioning/datasources/datasources.yml').datasources, 'datasources').map(
    (d) => rec(d, 'datasource'),
  );
  const dashboardText = read('grafana/dashboards/subagent-runs.json');
  const dashboard = rec(JSON.parse(dashboardText) as unknown, 'dashboard');
  const panels = arr(dashboard.panels, 'panels').map((p) => rec(p, 'panel'));

  it('provides Prometheus, Jaeger and Alertmanager data sources at their compose addresses', () => {
    expect(sources.map((s) => ({ uid: s.uid, type: s.type, url: s.url }))).toEqual([
      { uid: 'prometheus', type: 'prometheus', url: `http://${ep.prometheus.service}:${ep.prometheus.port}` },
      { uid: 'jaeger', type: 'jaeger', url: `http://${ep.jaeger.service}:${ep.jaeger.uiPort}` },
      { uid: 'alertmanager', type: 'alertmanager', url: `http://${ep.alertmanager.service}:${ep.alertmanager.port}` },
    ]);
  });

  it('loads the dashboards from the folder docker-compose.yml mounts', () => {
    const provider = rec(
      arr(yamlFile('grafana/provisioning/dashboards/dashboards.yml').providers, 'providers')[0],
      'provider',
    );
    const path = String(at(provider, 'options.path'));
    const grafanaVolumes = strs(
      rec(rec(yamlFile('docker-compose.yml').services, 'services').grafana, 'grafana').volumes,
      'volumes',
    );
    expect(grafanaVolumes).toContain(`./grafana/dashboards:${path}:ro`);
    expect(grafanaVolumes).toContain('./grafana/provisioning:/etc/grafana/provisioning:ro');
  });

  it('has the truncation rate, runs by stop reason, output source share, tokens, duration, mismatches, trace links and cost', () => {
    expect(panels.map((p) => p.title)).toEqual([
      'Max-tokens truncation rate (1h, as alerted)',
      'Runs by stop reason',
      'Output source share',
      'Tokens by type',
      'Run duration',
      'Output mismatches reported by runtimes',
      'Malformed frames',
      'Runs that stopped at max-tokens (click a trace ID for the trace)',
      'Recent runs (click a trace ID for the trace)',
      'Cost by agent and stop reason (1h, USD)',
    ]);
    const traceTables = panels.filter((p) => rec(p.datasource, 'datasource').uid === 'jaeger');
    expect(traceTables.map((p) => at(arr(p.targets, 'targets')[0], 'queryType'))).toEqual(['search', 'search']);
  });

  it('refers only to provisioned data sources', () => {
    const uids = new Set(sources.map((s) => s.uid));
    const used = [...dashboardText.matchAll(/"uid": "([^"]+)"/g)]
      .map((m) => m[1])
      .filter((u) => u !== 'subagent-otel-runs' && u !== '-- Grafana --');
    expect(used.length).toBeGreaterThan(0);
    expect(used.filter((u) => !uids.has(u))).toEqual([]);
  });

  it('draws the alert thresholds of the rules on the truncation panel', () => {
    const steps = arr(at(panels[0], 'fieldConfig.defaults.thresholds.steps'), 'steps').map((s) => rec(s, 'step').value);
    expect(steps).toEqual([
      null,
      PRODUCTION_SETTINGS.truncationWarningRatio,
      PRODUCTION_SETTINGS.truncationCriticalRatio,
    ]);
  });

  it("searches Jaeger for the observer's default service name", () => {
    const service = arr(at(dashboard, 'templating.list'), 'variables')
      .map((v) => rec(v, 'variable'))
      .find((v) => v.name === 'service');
    expect(at(service, 'query')).toBe(DEFAULT_SERVICE_NAME);
    expect(at(service, 'current.value')).toBe(DEFAULT_SERVICE_NAME);
  });

  it('links to the Jaeger UI on its published port', () => {
    const links = [...dashboardText.matchAll(/"url": "(http[^"]*)"/g)].map(
      (m) => new URL((m[1] ?? '').replace(/\$\{[^}]*\}/g, 'x')),
    );
    expect(links.length).toBeGreaterThanOrEqual(4);
    for (const link of links) expect(link.host).toBe(`localhost:${ep.jaeger.uiPort}`);
  });
});

describe('collector-config/README.md', () => {
  const readme = read('README.md');

  it('documents the observer settings of endpoints.json', () => {
    expect(readme).toContain(`OTEL_EXPORTER_OTLP_ENDPOINT=${ep.observer.otlpEndpoint}`);
    expect(readme).toContain(`OTEL_EXPORTER_OTLP_PROTOCOL=${ep.observer.otlpProtocol}`);
    expect(readme).toContain(`${ep.observer.prometheusPortOption} ${ep.observer.prometheusPort}`);
    expect(readme).toContain(`${ep.observer.prometheusPortEnv}=${ep.observer.prometheusPort}`);
    expect(readme).toContain(`${ep.observer.prometheusHostOption} <host>`);
    expect(readme).toContain(`${ep.observer.prometheusHostEnv}=<host>`);
    expect(readme).toContain(
      `http://${ep.observer.prometheusHostDefault}:${ep.observer.prometheusPort}${ep.observer.prometheusPath}`,
    );
    expect(readme).toContain(`${ep.observer.outDirEnv}=`);
  });

  it('gives the UI addresses on the published ports', () => {
    for (const port of [ep.grafana.port, ep.jaeger.uiPort, ep.prometheus.port, ep.alertmanager.port]) {
      expect(readme).toContain(`http://localhost:${port}`);
    }
  });

  it('names every port of endpoints.json in its port table', () => {
    const table = readme.slice(readme.indexOf('| Port |'));
    for (const port of [
      ep.collector.otlpGrpcPort,
      ep.collector.otlpHttpPort,
      ep.collector.prometheusExporterPort,
      ep.collector.healthCheckPort,
      ep.observer.prometheusPort,
      ep.jaeger.uiPort,
      ep.prometheus.port,
      ep.alertmanager.port,
      ep.grafana.port,
    ]) {
      expect(table).toMatch(new RegExp(`^\\| ${port} \\|`, 'm'));
    }
  });
});
