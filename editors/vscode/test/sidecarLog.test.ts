import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseLine } from '../src/sidecarLog';

test('sidecar log: one timestamp (the channel\'s) and the line\'s own level', () => {
	const cases: [string, ReturnType<typeof parseLine>][] = [
		['time=2026-12-02T03:10:54.123Z level=INFO msg="watching config" path=/h/.freecode/config.json', { level: 'info', text: 'watching config path=/h/.freecode/config.json' }],
		['time=2026-12-02T03:10:54.123Z level=WARN msg=problem server=a', { level: 'warn', text: 'problem server=a' }],
		['time=2026-12-02T03:10:54.123Z level=ERROR msg="say \\"no\\""', { level: 'error', text: 'say "no"' }],
		['time=2026-12-02T03:10:54.123Z level=DEBUG-4 msg=rpc', { level: 'debug', text: 'rpc' }],
		['INFO connected server=demo tools=7', { level: 'info', text: 'connected server=demo tools=7' }],
		['WARN config has problems path=/c.json', { level: 'warn', text: 'config has problems path=/c.json' }],
		['panic: runtime error: index out of range', { level: 'error', text: 'panic: runtime error: index out of range' }],
	];
	for (const [line, want] of cases) assert.deepEqual(parseLine(line), want, line);
	// A stack trace's lines keep the level of the panic above them.
	assert.deepEqual(parseLine('goroutine 1 [running]:', 'error'), { level: 'error', text: 'goroutine 1 [running]:' });
	assert.deepEqual(parseLine('INFORMATION is not a level'), { level: 'info', text: 'INFORMATION is not a level' });
});
