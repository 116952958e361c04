/**
 * The transcript formats `replay` and `watch` know, in the order they are
 * asked to classify a file. One entry per coding agent; each module says
 * which versions and layouts it reads (docs/TRANSCRIPTS.md).
 *
 * @module subagent-otel/transcripts/formats
 */
import { claudeCodeFormat } from './claude-code/files.js';
import { codexFormat } from './codex/files.js';
import type { TranscriptFormat } from './format.js';
import { geminiCliFormat } from './gemini-cli/files.js';

/**
 * The version of what the formats' `classify` answer for a file: bump it
 * whenever a format classifies some file differently (another kind, format
 * or facts). A watch remembers its files' classifications in its checkpoint
 * tagged with it, and classifies every file again when it differs
 * (decision 0134). 2: Claude Code 2.1.337's `api-request-route` records
 * identify a Claude Code file (a session file whose head holds only those
 * was no transcript before).
 */
export const TRANSCRIPT_CLASSIFIER_VERSION = 2;

/** Every known format. */
export const TRANSCRIPT_FORMATS: readonly TranscriptFormat[] = [claudeCodeFormat, codexFormat, geminiCliFormat];
