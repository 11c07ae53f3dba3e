Function ConvertTo-TitleCase($Text) {
    return $Text.Substring(0, 1).ToUpper() + $Text.Substring(1)
}

Export-ModuleMember -Function ConvertTo-TitleCase
