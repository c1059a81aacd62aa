// Which window/showDocument requests open a web page in the user's browser
// (the sidecar's sign-in pages), and which URL. client.ts opens it with
// vscode.env.openExternal; the integration tests load it as a browser
// would. Pure: no `vscode` import.

/** The parts of LSP's ShowDocumentParams read here. */
export interface ShowDocument {
	uri: string;
	external?: boolean;
}

/**
 * externalPage is the web page to open outside VS Code, exactly as the
 * sidecar sent it, or undefined when the request is not one (a file to
 * show in an editor, another scheme).
 */
export function externalPage(params: ShowDocument): string | undefined {
	return params.external === true && /^https?:\/\//i.test(params.uri) ? params.uri : undefined;
}
