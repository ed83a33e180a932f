"""An example action: reads the JSON context on stdin, reports a property and a log line."""
import json
import sys

context = json.load(sys.stdin)
where = f"{context['element'] or 'project'}/{context['event']}"
print("log:" + json.dumps({"level": "info", "msg": f"{context['instance']['name']}: {where}"}))
print("property:" + json.dumps({"name": "notified", "value": where, "secure": False}))
