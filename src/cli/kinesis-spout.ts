/**
 * Entry point. Run by Storm's ShellSpout as `node kinesis-spout.cjs [config.json]`: the spout. Run by an
 * operator as `kinesis-spout status|reset ...` (the npm bin, or the jar's KinesisSpoutTool): a tool.
 */
import { runSpout } from './run';
import { isHelpRequest, isTool, runHelpProcess, runToolProcess } from './tools';

const [first, ...rest] = process.argv.slice(2);
if (isTool(first)) runToolProcess(first, rest);
else if (isHelpRequest(first)) runHelpProcess(first);
// Storm speaks to the spout through pipes, never a terminal: someone typed `kinesis-spout` to see what it is.
else if (process.stdin.isTTY) runHelpProcess('help');
else runSpout();
