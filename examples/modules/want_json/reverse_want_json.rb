#!/usr/bin/ruby
# A WANT_JSON module in Ruby: the JSON arguments file's path is the only argument.
# Returns `text` reversed, and which Ansible version called it.
require 'json'

args = JSON.parse(File.read(ARGV[0]))
text = args['text']
if text.nil?
  puts JSON.generate({ 'failed' => true, 'msg' => 'missing required argument: text' })
  exit 1
end
puts JSON.generate({
  'changed' => false,
  'reversed' => text.reverse,
  'ansible_version' => args['_ansible_version']
})
