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

/** Every known format. */
export const TRANSCRIPT_FORMATS: readonly TranscriptFormat[] = [claudeCodeFormat, codexFormat, geminiCliFormat];
