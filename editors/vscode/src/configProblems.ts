// freecode/config/problems as diagnostics on the file they are about, so a
// broken config or settings file shows its errors where the user edits it.

import * as vscode from 'vscode';
import type * as p from '../../../frontend/src/protocol.gen';

export class ConfigProblems implements vscode.Disposable {
	private readonly diagnostics = vscode.languages.createDiagnosticCollection('freecode');

	/** set replaces the problems of one file; an empty list clears it. */
	set(file: p.ConfigProblems): void {
		const uri = vscode.Uri.file(file.path);
		if (file.problems.length === 0) {
			this.diagnostics.delete(uri);
			return;
		}
		this.diagnostics.set(
			uri,
			file.problems.map((x) => {
				// line and column are 1-based, as the CLI prints them.
				const line = Math.max(0, (x.line ?? 1) - 1);
				const col = Math.max(0, (x.column ?? 1) - 1);
				const d = new vscode.Diagnostic(
					new vscode.Range(line, col, line, col + 1),
					x.key ? `${x.key}: ${x.message}` : x.message,
					x.severity === 'warning' ? vscode.DiagnosticSeverity.Warning : vscode.DiagnosticSeverity.Error,
				);
				d.source = 'FreeCode';
				return d;
			}),
		);
	}

	clear(): void {
		this.diagnostics.clear();
	}

	dispose(): void {
		this.diagnostics.dispose();
	}
}
