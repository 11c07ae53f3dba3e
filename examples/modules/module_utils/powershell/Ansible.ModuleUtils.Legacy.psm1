# A small stand-in for the Legacy PowerShell util, written for sandball's examples:
# argument parsing and JSON results.

Function Parse-Args($arguments, $supports_check_mode = $false) {
    $params = $complex_args
    if ($arguments.Length -gt 0) { $params = Get-Content $arguments[0] | ConvertFrom-Json }
    return $params
}

Function Get-AnsibleParam($obj, $name, $type = "str", $failifempty = $false) {
    $value = $obj.$name
    if ($failifempty -and -not $value) { Fail-Json @{} "missing required argument: $name" }
    return $value
}

Function Exit-Json($obj) {
    Write-Output ($obj | ConvertTo-Json -Compress -Depth 99)
    exit 0
}

Function Fail-Json($obj, $message) {
    $obj.msg = $message
    $obj.failed = $true
    Write-Output ($obj | ConvertTo-Json -Compress -Depth 99)
    exit 1
}

Export-ModuleMember -Function Parse-Args, Get-AnsibleParam, Exit-Json, Fail-Json
