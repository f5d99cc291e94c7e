/**
 * The size rule of docs/ARCHITECTURE.md: a source file past `FILE_LINES_MAX` lines says why in its header
 * (a line starting `Past 400 lines:`), and a function past `FUNCTION_LINES_MAX` lines says why in a comment
 * at its top (`// Past 70 lines: …`, or that line in its doc comment). Functions are found with the
 * TypeScript compiler's parser, so a function's length is its text's, from its first line to its last.
 */
import ts from 'typescript';
import type { SourceFile } from './architecture.ts';

/** Lines a source file may have before it must say why. */
export const FILE_LINES_MAX = 400;
/** Lines a function may have before it must say why. */
export const FUNCTION_LINES_MAX = 70;

const FILE_REASON = /Past 400 lines:/;
const FUNCTION_REASON = /Past 70 lines:/;

export interface SizeViolation {
  rule: 'file_too_long' | 'function_too_long';
  path: string;
  line: number;
  detail: string;
}

function isFunctionLike(node: ts.Node): node is ts.FunctionLikeDeclaration {
  return (
    ts.isFunctionDeclaration(node) ||
    ts.isMethodDeclaration(node) ||
    ts.isArrowFunction(node) ||
    ts.isFunctionExpression(node) ||
    ts.isConstructorDeclaration(node) ||
    ts.isGetAccessorDeclaration(node) ||
    ts.isSetAccessorDeclaration(node)
  );
}

/** A function's name as a reader finds it: its own, or the variable, property or call it is given to. */
function nameOf(node: ts.FunctionLikeDeclaration, source: ts.SourceFile): string {
  if (node.name) return node.name.getText(source);
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)) return parent.name.getText(source);
  if (ts.isCallExpression(parent)) return `callback of ${parent.expression.getText(source).slice(0, 40)}`;
  return 'anonymous function';
}

/** The comments a reader sees at a function's top: before it (or its statement) and before its body's first line. */
function commentsAtTop(node: ts.FunctionLikeDeclaration, source: ts.SourceFile): string {
  const text = source.getFullText();
  const holders: ts.Node[] = [node];
  let up: ts.Node = node.parent;
  while (
    up &&
    (ts.isVariableDeclaration(up) || ts.isVariableDeclarationList(up) || ts.isVariableStatement(up))
  ) {
    holders.push(up);
    up = up.parent;
  }
  if (ts.isPropertyAssignment(node.parent)) holders.push(node.parent);
  const ranges = holders.flatMap((h) => ts.getLeadingCommentRanges(text, h.getFullStart()) ?? []);
  const body = node.body;
  if (body && ts.isBlock(body)) {
    const first = body.statements[0];
    ranges.push(
      ...(ts.getLeadingCommentRanges(text, first ? first.getFullStart() : body.getStart(source) + 1) ?? []),
    );
  }
  return ranges.map((r) => text.slice(r.pos, r.end)).join('\n');
}

/** Files and functions past their limits that do not say why. */
export function checkSizes(files: readonly SourceFile[]): SizeViolation[] {
  const found: SizeViolation[] = [];
  for (const file of files) {
    const lines = file.text.split('\n').length - (file.text.endsWith('\n') ? 1 : 0);
    if (lines > FILE_LINES_MAX && !FILE_REASON.test(file.text.slice(0, 4_000)))
      found.push({ rule: 'file_too_long', path: file.path, line: 1, detail: `${lines} lines` });
    const source = ts.createSourceFile(file.path, file.text, ts.ScriptTarget.Latest, true);
    const visit = (node: ts.Node) => {
      if (isFunctionLike(node) && node.body) {
        const start = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
        const end = source.getLineAndCharacterOfPosition(node.getEnd()).line + 1;
        if (end - start + 1 > FUNCTION_LINES_MAX && !FUNCTION_REASON.test(commentsAtTop(node, source)))
          found.push({
            rule: 'function_too_long',
            path: file.path,
            line: start,
            detail: `${nameOf(node, source)}: ${end - start + 1} lines`,
          });
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return found;
}
