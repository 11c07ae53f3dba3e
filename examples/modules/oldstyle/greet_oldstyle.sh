#!/bin/sh
# An old-style module: no marker, so its arguments arrive as a file of shell-quoted
# key=value pairs, whose path is the only argument. `. "$1"` makes them variables.
# Arguments: name (required), shout (optional: true makes the greeting upper case).

. "$1"

if [ -z "$name" ]; then
    printf '{"failed": true, "msg": "missing required argument: name"}\n'
    exit 1
fi

greeting="Hello, $name!"
case "$shout" in
    True | true | yes | 1) greeting=$(printf '%s' "$greeting" | tr '[:lower:]' '[:upper:]') ;;
esac

# JSON-escape backslashes and double quotes.
escaped=$(printf '%s' "$greeting" | sed 's/\\/\\\\/g; s/"/\\"/g')
printf '{"changed": false, "greeting": "%s"}\n' "$escaped"
