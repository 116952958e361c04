/**
 * Types of packed-install.mjs (plain JavaScript, run without a build), for
 * the TypeScript tests that import it.
 *
 * @module subagent-otel/scripts/packed-install
 */

/** The repository root (the package that is packed). */
export declare const PACKAGE_ROOT: string;

/** `npm pack` of the repository into `destination`; returns the tarball's absolute path. */
export declare function packPackage(destination: string): string;

/** The command installed from a tarball with `npm install --global --prefix`. */
export interface InstalledCommand {
  /** `<prefix>/bin/subagent-otel`, npm's link to the installed bundle. */
  readonly bin: string;
  /** `<prefix>/lib/node_modules/subagent-otel`. */
  readonly packageDir: string;
}

/** Installs the command from `tarball` into `prefix` (`npm install --global --prefix`). */
export declare function installPackedCommand(tarball: string, prefix: string): InstalledCommand;

/** Where an exporting command sends. */
export interface ExportDestination {
  /** `OTEL_EXPORTER_OTLP_ENDPOINT`. */
  readonly endpoint: string;
  /** `OTEL_EXPORTER_OTLP_PROTOCOL`: `grpc`, `http/protobuf` or `http/json`. */
  readonly protocol: string;
  /** `OTEL_EXPORTER_OTLP_CERTIFICATE`: the PEM file that roots a TLS endpoint's certificate. */
  readonly certificate?: string;
  /** `OTEL_SERVICE_NAME`. */
  readonly service: string;
}

/** The variables that make a command export to `destination` only (every other telemetry variable emptied, a 120 s shutdown budget). */
export declare function exportingEnvironment(destination: ExportDestination): Record<string, string>;
